"""The outbox row: an event written in the transaction of the change it describes.

Here, below the domain and the delivery engine, because both write events: the API's changes
(``domain``) and the worker's alerts about webhooks (``delivery.manager``: ``webhook.disabled``,
``delivery.exhausted``). Nothing here talks to the network, so a crash at any point keeps both
the change and its event, or neither.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from hookline import ids, tracing
from hookline.storage import direct
from hookline.storage.models import events
from hookline.timeutil import utcnow


async def record_event(
    conn: AsyncConnection,
    account_id: str,
    event_type: str,
    data: dict[str, Any],
    previous_attributes: dict[str, Any] | None = None,
    *,
    target_webhook_id: str | None = None,
    about_webhook_id: str | None = None,
    trace_context: str | None = None,
) -> str:
    row = event_row(
        account_id,
        event_type,
        data,
        previous_attributes,
        target_webhook_id=target_webhook_id,
        about_webhook_id=about_webhook_id,
        trace_context=trace_context,
    )
    await direct.execute(conn, _INSERT_EVENT, row)
    return str(row["id"])


def event_row(
    account_id: str,
    event_type: str,
    data: dict[str, Any],
    previous_attributes: dict[str, Any] | None = None,
    *,
    target_webhook_id: str | None = None,
    about_webhook_id: str | None = None,
    trace_context: str | None = None,
) -> dict[str, Any]:
    """A new, undispatched event's row, for a write that inserts it beside its change. Its
    trace context is the current span's (``tracing``), unless the caller gives one."""
    return {
        "id": ids.event_id(),
        "account_id": account_id,
        "type": event_type,
        "data": data,
        "previous_attributes": previous_attributes,
        "created_at": utcnow(),
        "dispatched": False,
        "target_webhook_id": target_webhook_id,
        "about_webhook_id": about_webhook_id,
        "trace_context": trace_context or tracing.current_traceparent(),
        "stream_seq": None,  # numbered by the dispatcher, in commit order (the event stream)
    }


# Built once (one per write request): an INSERT with parameters, not ``.values()`` each time.
_INSERT_EVENT = direct.DirectStatement(events.insert())
