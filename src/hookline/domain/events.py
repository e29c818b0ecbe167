"""Events: written in the caller's transaction (the transactional outbox), read for reconciliation.

The delivery dispatcher later fans each undispatched event out into deliveries; nothing here talks
to the network, so a crash at any point either keeps both the change and its event, or neither.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from hookline.storage.db import Connection, fetch_one
from hookline.storage.outbox import event_row, record_event
from hookline.storage.queries import events as queries
from hookline.timeutil import iso, utcnow

EVENT_TYPES = (
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "contact.erased",
    "call.started",
    "call.completed",
    "lead.qualified",
    "appointment.booked",
    "call.analyzed",
    "webhook.disabled",
    "delivery.exhausted",
)
TEST_EVENT_TYPE = "webhook.test"
VISIBLE_DAYS = 30
__all__ = [
    "EVENT_TYPES",
    "READ_SCOPES",
    "event_out",
    "event_row",
    "get_event",
    "list_events",
    "read_scope",
    "readable_types",
    "record_event",
]

# An event is read with the read scope of the resource it is about (contract: "Who may read
# which event"); write scopes grant no reading.
READ_SCOPES = ("contacts:read", "calls:read", "webhooks:read")
_CALL_TYPES = ("lead.qualified", "appointment.booked", "call.analyzed")


def read_scope(event_type: str) -> str:
    """The scope a key needs to read events of ``event_type``."""
    if event_type.startswith("contact."):
        return "contacts:read"
    if event_type.startswith("call.") or event_type in _CALL_TYPES:
        return "calls:read"
    if event_type.startswith(("webhook.", "delivery.")):
        return "webhooks:read"
    raise ValueError(f"no read scope is defined for event type {event_type}")


_READABLE = {
    scope: tuple(t for t in (*EVENT_TYPES, TEST_EVENT_TYPE) if read_scope(t) == scope)
    for scope in READ_SCOPES
}


def readable_types(scopes: Collection[str]) -> tuple[str, ...] | None:
    """The event types a key with ``scopes`` may read; None when it may read every type (no
    filter needed)."""
    if all(scope in scopes for scope in READ_SCOPES):
        return None
    return tuple(t for scope in READ_SCOPES if scope in scopes for t in _READABLE[scope])


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


async def get_event(
    conn: Connection, account_id: str, event_id: str, types: Sequence[str] | None = None
) -> dict[str, Any] | None:
    """The account's event, if it is of one of ``types`` (None: of any type)."""
    params = {"id": event_id, "account_id": account_id, "types": types}
    query = queries.BY_ID if types is None else queries.BY_ID_OF_TYPES
    row = await fetch_one(conn, query, params)
    return event_out(row) if row is not None else None


async def list_events(
    conn: Connection,
    account_id: str,
    *,
    limit: int,
    before_id: str | None = None,
    event_type: str | None = None,
    offset: int | None = None,
    types: Sequence[str] | None = None,
    object_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[dict[str, Any]]:
    """Newest first, the last ``VISIBLE_DAYS`` days (narrowed to [``since``, ``until``] when
    given), of ``types`` only when given (a key's readable types: filtered in the query, so a
    page is never short), about ``object_id`` only when given; ask ``limit + 1`` to see a next
    page."""
    shape = queries.ListShape(
        before_id is not None,
        event_type is not None,
        bool(offset),
        types is not None,
        object_id=object_id is not None,
        until=until is not None,
    )
    oldest = utcnow() - timedelta(days=VISIBLE_DAYS)
    params = {
        "account_id": account_id,
        "since": max(since, oldest) if since is not None else oldest,
        "until": until,
        "object_id": object_id,
        "before_id": before_id,
        "type": event_type,
        "types": types,
        "limit": limit,
        "offset": offset,
    }
    return [event_out(r) for r in await conn.execute(queries.LIST.get(shape), params)]
