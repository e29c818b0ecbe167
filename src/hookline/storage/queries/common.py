"""Clauses many statements share: written once, so every resource spells them the same way."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import BindParameter, ColumnElement, Integer, Select, Table, bindparam, select


def owned(table: Table, *, prefix: str = "") -> tuple[ColumnElement[bool], ...]:
    """``id = :id AND account_id = :account_id``: one of the account's rows, never another's.
    ``prefix`` names the parameters (``b_id``) where a SET clause uses the column names."""
    return (
        table.c.id == bindparam(f"{prefix}id", type_=table.c.id.type),
        table.c.account_id == bindparam(f"{prefix}account_id", type_=table.c.account_id.type),
    )


def of_account(table: Table) -> ColumnElement[bool]:
    """``account_id = :account_id``."""
    return table.c.account_id == bindparam("account_id", type_=table.c.account_id.type)


def this_row(table: Table) -> ColumnElement[bool]:
    """``id = :b_id``, for an UPDATE whose SET parameters are named after its columns."""
    return table.c.id == bindparam("b_id", type_=table.c.id.type)


def column_values(table: Table, names: Iterable[str]) -> dict[str, BindParameter[Any]]:
    """A SET (or VALUES) clause for ``names``, each a parameter of its column's name and type."""
    return {name: bindparam(name, type_=table.c[name].type) for name in sorted(names)}


def newest_first(
    table: Table,
    clauses: list[ColumnElement[bool]],
    *,
    before_id: bool,
    offset: bool,
    columns: Sequence[ColumnElement[Any]] | None = None,
) -> Select[Any]:
    """A page of ``table``'s rows that match ``clauses``, newest first (ids are UUIDv7): at most
    ``limit``, older than ``before_id`` (a cursor) and past ``offset`` when the shape has them;
    ``columns`` (default: all of ``table``'s)."""
    if before_id:
        clauses = [*clauses, table.c.id < bindparam("before_id", type_=table.c.id.type)]
    query = select(*(columns or table.c)).where(*clauses).order_by(table.c.id.desc())
    query = query.limit(bindparam("limit", type_=Integer()))
    return query.offset(bindparam("offset", type_=Integer())) if offset else query
