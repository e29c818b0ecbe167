"""A webhook's deliveries as the API and the dashboard see them: a page of them, one with its
attempt log, a manual retry, and the test event of ``POST /v1/webhooks/{id}/test``.

The request side of deliveries, apart from the worker's engine (``delivery.manager``: fan-out,
claims, outcomes), so that the HTTP layers never import the worker's module (an import-linter
contract in ``pyproject.toml``). Like every domain module, nothing here commits. The statements
are in ``storage.queries.deliveries``; the delivery object is ``delivery.payloads.delivery_out``,
which the worker's ``delivery.exhausted`` events carry too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hookline.delivery.payloads import delivery_out
from hookline.domain import outbound
from hookline.domain.events import TEST_EVENT_TYPE
from hookline.storage.db import Connection, fetch_one
from hookline.storage.outbox import record_event
from hookline.storage.queries import deliveries as queries
from hookline.timeutil import iso


def attempt_json(row: Any) -> dict[str, Any]:
    return {
        "attempted_at": iso(row.started_at),
        "duration_ms": row.duration_ms,
        "status_code": row.status_code,
        "succeeded": row.succeeded,
        "error": row.error,
        "response_body": row.response_body,
    }


async def list_deliveries(
    conn: Connection,
    account_id: str,
    webhook_id: str,
    *,
    limit: int = 50,
    cursor: str | None = None,
    status: str | None = None,
    offset: int | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of a webhook's deliveries, newest first, and the cursor of the next page."""
    query = queries.PAGE_OF_DELIVERIES.get((cursor is not None, status is not None, bool(offset)))
    params = {
        "account_id": account_id,
        "webhook_id": webhook_id,
        "limit": limit + 1,  # one more: whether there is a next page
        "cursor": cursor,
        "status": status,
        "offset": offset,
    }
    rows = (await conn.execute(query, params)).all()
    page = [delivery_out(row) for row in rows[:limit]]
    next_cursor = page[-1]["id"] if len(rows) > limit else None
    return page, next_cursor


async def get_delivery(
    conn: Connection, account_id: str, webhook_id: str, delivery_id: str
) -> dict[str, Any] | None:
    """One delivery with ``attempt_log``: every attempt, oldest first. None if not the
    account's (the API answers 404 either way)."""
    row = await fetch_one(conn, queries.OWNED_DELIVERY, _owned(account_id, webhook_id, delivery_id))
    if row is None:
        return None
    attempts = (await conn.execute(queries.ATTEMPT_LOG, {"delivery_id": delivery_id})).all()
    return {**delivery_out(row), "attempt_log": [attempt_json(a) for a in attempts]}


async def retry_delivery(
    conn: Connection, account_id: str, webhook_id: str, delivery_id: str, *, now: datetime
) -> dict[str, Any] | None:
    """Manual retry: the delivery is due again now, whatever its state. A finished delivery
    gets one more attempt (its attempt count is past the schedule, so a failure ends it again);
    one in flight is left to its worker. Returns the delivery, None if unknown. Its commit wakes
    the workers (``Connection.wakes_workers``), so a worker picks it up at once."""
    conn.wakes_workers = True
    owned = _owned(account_id, webhook_id, delivery_id)
    await conn.execute(queries.RETRY_DELIVERY, {**owned, "now": now})
    row = await fetch_one(conn, queries.OWNED_DELIVERY, owned)
    if row is not None:
        await _probe_now(conn, account_id, webhook_id)
    return delivery_out(row) if row is not None else None


async def _probe_now(conn: Connection, account_id: str, webhook_id: str) -> None:
    """Someone asked for an attempt now (a manual retry, a test event): if the webhook's circuit
    is open (``delivery.retry.circuit_open``), its next probe is due at once instead of after
    the pause."""
    await conn.execute(queries.PROBE_NOW, {"b_id": webhook_id, "b_account": account_id})


def _owned(account_id: str, webhook_id: str, delivery_id: str) -> dict[str, str]:
    """The delivery, only if it is this account's and this webhook's (else: not found)."""
    return {"delivery_id": delivery_id, "account_id": account_id, "webhook_id": webhook_id}


async def insert_test_event(
    conn: Connection,
    account_id: str,
    webhook_id: str,
    example: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None,
) -> str:
    """The outbox row of ``POST /v1/webhooks/{id}/test``, for that webhook alone: a
    ``webhook.test`` event, or ``example`` (event type, data, previous attributes) when one was
    asked for. It counts against the webhook's rate limit (``RateLimited`` when used up,
    ``domain.outbound``), and an open circuit's probe is due at once. Returns the event id."""
    await outbound.take_test_send(conn, await outbound.held_webhook(conn, account_id, webhook_id))
    await _probe_now(conn, account_id, webhook_id)
    if example is None:
        message = {"webhook_id": webhook_id, "message": "This is a test event sent from hookline."}
        example = (TEST_EVENT_TYPE, message, None)
    event_type, data, previous_attributes = example
    return await record_event(
        conn, account_id, event_type, data, previous_attributes, target_webhook_id=webhook_id
    )
