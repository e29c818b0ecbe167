"""Account settings (``GET/PATCH /v1/account``): ``retention_days`` and ``max_call_seconds``."""

from __future__ import annotations

from typing import Any

from hookline.domain.calls import MAX_CALL_DURATION
from hookline.errors import NotFound
from hookline.storage.db import Connection, fetch_one
from hookline.storage.queries import accounts as queries
from hookline.timeutil import iso

RETENTION_DAYS = (1, 3650)
"""The bounds of ``retention_days`` (default 30): a day to ten years."""
MAX_CALL_SECONDS = (60, int(MAX_CALL_DURATION.total_seconds()))
"""The bounds of ``max_call_seconds`` (default 3600): a minute to the longest call recorded."""


def account_out(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "retention_days": row.retention_days,
        "max_call_seconds": row.max_call_seconds,
        "created_at": iso(row.created_at),
    }


async def get_account(conn: Connection, account_id: str) -> dict[str, Any]:
    params = {"account_id": account_id}
    row = await fetch_one(conn, queries.BY_ID, params)
    if row is None:  # a key outlives no account (ON DELETE CASCADE); a race at most
        raise NotFound("No such account.")
    return account_out(row)


async def update_account(
    conn: Connection, account_id: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Sets the settings in ``changes`` (already validated); a new ``max_call_seconds`` applies
    to calls started after it (a call's deadline is fixed when it starts)."""
    current = await get_account(conn, account_id)
    merged = {name: changes.get(name, current[name]) for name in queries.SETTING_NAMES}
    stored = (
        await conn.execute(queries.UPDATE_SETTINGS, {**merged, "account_id": account_id})
    ).one()
    return {**current, **stored._mapping}
