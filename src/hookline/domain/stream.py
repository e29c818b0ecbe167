"""Reads of ``GET /v1/events/stream``: the account's events in commit order (``stream_seq``,
numbered by the dispatcher; see ``storage.queries.deliveries.number_for_stream``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select

from hookline.storage.connector import Connection
from hookline.storage.models import events

BATCH = 100


async def latest_seq(conn: Connection, account_id: str | None = None) -> int:
    """The highest number handed out (the account's, or anyone's); 0 when none."""
    query = select(func.coalesce(func.max(events.c.stream_seq), 0))
    if account_id is not None:
        query = query.where(events.c.account_id == account_id)
    return int(await conn.scalar(query) or 0)


async def position_of(conn: Connection, account_id: str, event_id: str) -> int | None:
    """The number of one of the account's streamed events; None if unknown or not yet
    numbered."""
    value = await conn.scalar(
        select(events.c.stream_seq).where(
            events.c.id == event_id, events.c.account_id == account_id
        )
    )
    return int(value) if value is not None else None


async def events_after(
    conn: Connection, account_id: str, after: int, types: Sequence[str] | None
) -> list[Any]:
    """The next batch after number ``after``, in commit order; targeted events (tests,
    examples) are for one webhook and never streamed."""
    query = (
        select(
            events.c.id,
            events.c.type,
            events.c.created_at,
            events.c.data,
            events.c.previous_attributes,
            events.c.stream_seq,
        )
        .where(
            events.c.account_id == account_id,
            events.c.stream_seq > after,
            events.c.target_webhook_id.is_(None),
        )
        .order_by(events.c.stream_seq)
        .limit(BATCH)
    )
    if types:
        query = query.where(events.c.type.in_(list(types)))
    return list(await conn.execute(query))
