"""The statements of accounts (``domain.keys``, the dashboard's people)."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Integer, ScalarSelect, Table, bindparam, func, select

from hookline.storage.models import accounts, api_keys, users
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


def _count_of_account(table: Table, *clauses: ColumnElement[bool]) -> ScalarSelect[int]:
    query = select(func.count()).select_from(table).where(table.c.account_id == accounts.c.id)
    return query.where(*clauses).scalar_subquery()


PAGE = Query(
    select(
        accounts.c.id,
        accounts.c.name,
        accounts.c.created_at,
        _count_of_account(users).label("members"),
        _count_of_account(api_keys, api_keys.c.revoked_at.is_(None)).label("live_keys"),
    )
    .where(accounts.c.id > bindparam("after", type_=accounts.c.id.type))
    .order_by(accounts.c.id)
    .limit(bindparam("limit", type_=Integer()))
)
"""Up to ``limit`` accounts after id ``after``, oldest first, with their number of dashboard
users and of live keys (for ``hookline accounts list``)."""
