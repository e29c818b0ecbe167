"""The statements of accounts (``domain.keys``, the dashboard's people)."""

from __future__ import annotations

from sqlalchemy import (
    ColumnElement,
    Integer,
    ScalarSelect,
    Table,
    bindparam,
    func,
    select,
    update,
)

from hookline.storage.models import accounts, api_keys, users
from hookline.storage.queries.common import column_values
from hookline.storage.statements import Query

INSERT = Query(accounts.insert().values(column_values(accounts, ("id", "name", "created_at"))))
"""A new account (its settings take their defaults)."""

_THIS = accounts.c.id == bindparam("account_id")
ID_OF = Query(select(accounts.c.id).where(_THIS))
"""The id back when the account exists."""
NAME_OF = Query(select(accounts.c.name).where(_THIS))
BY_ID = Query(select(accounts).where(_THIS))
"""The account with its settings (GET /v1/account)."""
SETTING_NAMES = ("retention_days", "max_call_seconds")
MAX_CALL_SECONDS = Query(select(accounts.c.max_call_seconds).where(_THIS))
UPDATE_SETTINGS = Query(
    update(accounts)
    .where(_THIS)
    .values(
        retention_days=bindparam("retention_days", type_=Integer()),
        max_call_seconds=bindparam("max_call_seconds", type_=Integer()),
    )
    .returning(accounts.c.retention_days, accounts.c.max_call_seconds)
)
"""Sets both settings of the account; returns them."""
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
