"""Reads of ``GET /v1/events/stream``: the account's events in commit order (``stream_seq``,
numbered by the dispatcher; see ``storage.deliverystore``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookline.storage.db import Connection
from hookline.storage.queries import stream as queries

BATCH = 100


async def latest_seq(conn: Connection, account_id: str | None = None) -> int:
    """The highest number handed out (the account's, or anyone's); 0 when none."""
    if account_id is None:
        return int(await conn.scalar(queries.LATEST_SEQ) or 0)
    return int(await conn.scalar(queries.LATEST_SEQ_OF_ACCOUNT, {"account_id": account_id}) or 0)


async def position_of(conn: Connection, account_id: str, event_id: str) -> int | None:
    """The number of one of the account's streamed events; None if unknown or not yet
    numbered."""
    value = await conn.scalar(queries.SEQ_OF, {"id": event_id, "account_id": account_id})
    return int(value) if value is not None else None


async def events_after(
    conn: Connection, account_id: str, after: int, types: Sequence[str] | None
) -> list[Any]:
    """The next batch after number ``after``, in commit order; targeted events (tests,
    examples) are for one webhook and never streamed."""
    params = {"account_id": account_id, "after": after, "types": types, "limit": BATCH}
    return list(await conn.execute(queries.AFTER.get(bool(types)), params))
