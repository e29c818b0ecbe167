"""Outbound traffic a request makes a webhook's receiver take, bounded: the receiver check's
probes (``domain.conformance``) and ``/test``'s send (``domain.deliveries``).

Both count against the webhook's ``rate_limit``: the sliding window the delivery worker's claims
keep in the webhook row (``delivery.manager.plan_starts``, the claim's own rule), taken while
the request's transaction holds that row, so the limit holds across processes and workers. A
webhook also takes one receiver check per ``CONFORMANCE_INTERVAL`` (``conformance_at``, written
in the same transaction). What does not fit is refused with ``RateLimited`` and a
``Retry-After`` saying when it would; the transaction then rolls back and takes nothing.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from hookline.delivery import conformance, manager
from hookline.errors import NotFound, RateLimited
from hookline.storage.db import Connection, fetch_one
from hookline.storage.queries import webhooks as queries
from hookline.timeutil import utcnow

CONFORMANCE_INTERVAL = timedelta(seconds=10)
_START_DELAY = timedelta(microseconds=manager.RATE_START_DELAY_US)


async def held_webhook(conn: Connection, account_id: str, webhook_id: str) -> Any:
    """The account's webhook row, held until the transaction ends; ``NotFound`` otherwise."""
    row = await fetch_one(
        conn, queries.BY_ID_FOR_UPDATE, {"id": webhook_id, "account_id": account_id}
    )
    if row is None:
        raise NotFound(f"No webhook with id {webhook_id}.")
    return row


async def start_receiver_check(conn: Connection, row: Any) -> conformance.Pace | None:
    """Take a receiver check for the held webhook ``row``: how its probes are paced (None: at
    once, the webhook has no rate limit)."""
    now = utcnow()  # read once the row is held: a waiter sees the run that held it before
    if row.conformance_at is not None and now < row.conformance_at + CONFORMANCE_INTERVAL:
        wait = row.conformance_at + CONFORMANCE_INTERVAL - now
        raise RateLimited(
            f"This webhook's receiver was checked less than "
            f"{CONFORMANCE_INTERVAL.total_seconds():g} s ago; one check per "
            f"{CONFORMANCE_INTERVAL.total_seconds():g} s.",
            headers=_retry_after(wait),
        )
    changes: dict[str, Any] = {"conformance_at": now}
    pace = None
    if row.rate_limit is not None:
        probes = conformance.probe_count(has_auth=row.auth_enc is not None)
        starts, changes["rate_starts"] = _within_rate_limit(row, probes, now)
        pace = conformance.Pace(starts, row.rate_limit)
    await _write(conn, row, changes)
    return pace


async def take_test_send(conn: Connection, row: Any) -> None:
    """Count a test send against the held webhook ``row``'s rate limit, if it has one."""
    if row.rate_limit is None:
        return
    _, window = _within_rate_limit(row, 1, utcnow())
    await _write(conn, row, {"rate_starts": window})


def _within_rate_limit(row: Any, count: int, now: datetime) -> tuple[list[datetime], Any]:
    """``count`` starts by the window's rule; ``RateLimited`` unless the first is now."""
    starts, window = manager.plan_starts(row.rate_limit, row.rate_starts, count, now)
    wait = starts[0] - _START_DELAY - now
    if wait > timedelta(0):
        raise RateLimited(
            f"This webhook's rate_limit ({row.rate_limit} a second) is used up right now.",
            headers=_retry_after(wait),
        )
    return starts, window


def _retry_after(wait: timedelta) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(wait.total_seconds())))}


async def _write(conn: Connection, row: Any, changes: dict[str, Any]) -> None:
    await conn.execute(queries.UPDATE.get(frozenset(changes)), {**changes, "b_id": row.id})
