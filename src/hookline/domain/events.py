"""Events: written in the caller's transaction (the transactional outbox), read for reconciliation.

The delivery dispatcher later fans each undispatched event out into deliveries; nothing here talks
to the network, so a crash at any point either keeps both the change and its event, or neither.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hookline.storage.db import Connection, fetch_one
from hookline.storage.outbox import event_row, record_event
from hookline.storage.queries import events as queries
from hookline.timeutil import iso, utcnow

EVENT_TYPES = (
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "call.started",
    "call.completed",
    "lead.qualified",
    "appointment.booked",
    "webhook.disabled",
    "delivery.exhausted",
)
TEST_EVENT_TYPE = "webhook.test"
VISIBLE_DAYS = 30
__all__ = ["EVENT_TYPES", "event_out", "event_row", "get_event", "list_events", "record_event"]


def event_out(row: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": row.id,
        "type": row.type,
        "timestamp": iso(row.created_at),
        "data": row.data,
    }
    if row.type == "contact.updated":
        out["previous_attributes"] = row.previous_attributes or {}
    return out


async def get_event(conn: Connection, account_id: str, event_id: str) -> dict[str, Any] | None:
    row = await fetch_one(conn, queries.BY_ID, {"id": event_id, "account_id": account_id})
    return event_out(row) if row is not None else None


async def list_events(
    conn: Connection,
    account_id: str,
    *,
    limit: int,
    before_id: str | None = None,
    event_type: str | None = None,
    offset: int | None = None,
) -> list[dict[str, Any]]:
    """Newest first, the last ``VISIBLE_DAYS`` days; ask ``limit + 1`` to see a next page."""
    shape = queries.ListShape(before_id is not None, event_type is not None, bool(offset))
    params = {
        "account_id": account_id,
        "since": utcnow() - timedelta(days=VISIBLE_DAYS),
        "before_id": before_id,
        "type": event_type,
        "limit": limit,
        "offset": offset,
    }
    return [event_out(r) for r in await conn.execute(queries.LIST.get(shape), params)]
