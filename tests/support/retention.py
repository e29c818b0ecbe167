"""Expired rows for the retention sweep, written straight to the tables in bulk (not through the
API): dispatched events, each with a succeeded delivery, as the worker leaves them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert

from hookline import ids
from hookline.storage.db import Database
from hookline.storage.models import deliveries, events
from hookline.storage.statements import Query
from hookline.timeutil import utcnow

CHUNK = 2000
INSERT_EVENTS = Query(insert(events))
INSERT_DELIVERIES = Query(insert(deliveries))


def _event_and_delivery(account_id: str, webhook_id: str, n: int) -> tuple[Any, Any]:
    now = utcnow()
    event_id = ids.event_id()
    event = {
        "id": event_id,
        "account_id": account_id,
        "type": "contact.created",
        "data": {"object": "contact", "id": ids.contact_id(), "first_name": f"Old{n}"},
        "previous_attributes": None,
        "created_at": now,
        "dispatched": True,
        "target_webhook_id": None,
        "stream_seq": None,
        "about_webhook_id": None,
        "trace_context": None,
    }
    delivery = {
        "id": ids.delivery_id(),
        "account_id": account_id,
        "webhook_id": webhook_id,
        "event_id": event_id,
        "event_type": "contact.created",
        "status": "succeeded",
        "attempts": 1,
        "next_attempt_at": None,
        "last_status_code": 200,
        "last_error": None,
        "leased_by": None,
        "leased_until": None,
        "created_at": now,
        "updated_at": now,
    }
    return event, delivery


async def delivered_events(db: Database, account_id: str, webhook_id: str, count: int) -> None:
    """``count`` dispatched events of the account, each delivered once to ``webhook_id``."""
    for start in range(0, count, CHUNK):
        pairs = [
            _event_and_delivery(account_id, webhook_id, n)
            for n in range(start, min(count, start + CHUNK))
        ]
        async with db.begin() as conn:
            await conn.execute_many(INSERT_EVENTS, [event for event, _ in pairs])
            await conn.execute_many(INSERT_DELIVERIES, [delivery for _, delivery in pairs])
