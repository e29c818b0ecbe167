"""The statements of accounts (``domain.keys``, the dashboard's people)."""

from __future__ import annotations

from sqlalchemy import bindparam, select

from hookline.storage.models import accounts
from hookline.storage.statements import Query

INSERT = Query(accounts.insert())
"""A new account (every column)."""

_THIS = accounts.c.id == bindparam("account_id")
ID_OF = Query(select(accounts.c.id).where(_THIS))
"""The id back when the account exists."""
NAME_OF = Query(select(accounts.c.name).where(_THIS))
LOCK = Query(select(accounts.c.id).where(_THIS).with_for_update())
"""Locks the account's row until the transaction ends (PostgreSQL; SQLite's writes are one
at a time already): serialises changes that check a per-account cap."""
