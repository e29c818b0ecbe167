"""The statements of ``Idempotency-Key`` (``guards.idempotency``). A key's row is named by
``b_account_id`` and ``b_key``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, and_, bindparam, func, null, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from hookline.storage.models import idempotency_keys as keys_table
from hookline.storage.statements import Query

_THIS_SLOT = and_(
    keys_table.c.account_id == bindparam("b_account_id"), keys_table.c.key == bindparam("b_key")
)
LOOKUP = Query(
    select(
        keys_table.c.request_hash,
        keys_table.c.response_status,
        keys_table.c.response_headers,
        keys_table.c.response_body,
        keys_table.c.created_at,
    ).where(_THIS_SLOT)
)
"""The key's row: what decides its answer."""

STORE = Query(
    update(keys_table)
    .where(_THIS_SLOT)
    .values(
        response_status=bindparam("b_status", type_=keys_table.c.response_status.type),
        response_headers=bindparam("b_headers", type_=keys_table.c.response_headers.type),
        response_body=bindparam("b_body", type_=keys_table.c.response_body.type),
    )
)
"""The response (``b_status``, ``b_headers``, ``b_body``) on the key's row."""

PRUNE = Query(
    keys_table.delete().where(
        keys_table.c.created_at < bindparam("b_before", type_=keys_table.c.created_at.type)
    )
)
"""Deletes every row created before ``b_before``."""


def _reserve_statement(insert: Any, *, try_lock: bool) -> Query:
    """INSERT the reservation; over an expired or abandoned row, take it over; RETURNING a row
    only when this request now holds the key.

    ``try_lock`` (PostgreSQL): insert only if this transaction gets the key's advisory lock, which
    every holder keeps until it ends. Without it, the upsert would wait for a holder in another
    process instead of answering 409 at once.
    """
    held = keys_table.c
    values = {
        "account_id": bindparam("b_account_id", type_=held.account_id.type),
        "key": bindparam("b_key", type_=held.key.type),
        "request_hash": bindparam("b_request_hash", type_=held.request_hash.type),
        "response_status": null(),
        "response_headers": null(),
        "response_body": null(),
        "created_at": bindparam("b_created_at", type_=held.created_at.type),
    }
    if try_lock:
        free = func.pg_try_advisory_xact_lock(bindparam("b_lock", type_=BigInteger()))
        row = select(*(value.label(name) for name, value in values.items())).where(free)
        statement = insert(keys_table).from_select(list(values), row)
    else:
        statement = insert(keys_table).values(values)
    return Query(
        statement.on_conflict_do_update(
            index_elements=[held.account_id, held.key],
            set_={
                "request_hash": statement.excluded.request_hash,
                "response_status": null(),
                "response_headers": null(),
                "response_body": null(),
                "created_at": statement.excluded.created_at,
            },
            where=or_(
                held.created_at < bindparam("b_expired_before", type_=held.created_at.type),
                and_(
                    held.response_status.is_(None),
                    held.created_at < bindparam("b_abandoned_before", type_=held.created_at.type),
                ),
            ),
        ).returning(held.created_at)
    )


RESERVE = {
    "sqlite": _reserve_statement(sqlite.insert, try_lock=False),
    "postgresql": _reserve_statement(postgresql.insert, try_lock=True),
}
"""By dialect name: takes the key for ``b_request_hash`` at ``b_created_at`` (a free key, or a
row created before ``b_expired_before``, or one without a response created before
``b_abandoned_before``); a row back means this request holds it. On PostgreSQL only if the
key's advisory lock ``b_lock`` is free."""
