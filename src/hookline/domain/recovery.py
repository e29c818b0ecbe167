"""Recovery after an outage (``POST /v1/webhooks/{id}/recover`` and the dashboard's form):
schedule again what a webhook missed in a window, and the preview of how much that is.

On the request side, apart from the worker's engine; which missed events a webhook is owed is
the fan-out's own rule, imported from it (``delivery.manager.received_by``), never a copy. The
statements are in ``storage.queries.deliveries``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hookline.delivery import manager
from hookline.storage.db import Connection, Database, fetch_all, fetch_one
from hookline.storage.queries import deliveries as queries
from hookline.timeutil import utcnow

# Rows per recovery batch: each batch's write holds SQLite's single writer while it inserts or
# updates this many deliveries (five indexes each), so smaller keeps the API's writes waiting
# less (bench/recover_latency.py).
RECOVER_BATCH = 250


@dataclass(frozen=True)
class RecoveryWindow:
    """Events created in [since, until] (both inclusive), UTC."""

    since: datetime
    until: datetime


class WebhookNotActive(Exception):
    """Recovery needs an active webhook (an inactive one would get nothing)."""


def _event_id_bound(moment: datetime) -> str:
    """An id at or below every event id minted from ``moment`` on: ids are UUIDv7, whose first
    12 hex digits are the millisecond of creation, never earlier than the clock (``hookline.ids``
    may borrow the next millisecond in a burst, never an earlier one): only a lower bound holds."""
    return f"evt_{max(0, int(moment.timestamp() * 1000)):012x}"


# An event's id is minted just before its created_at is read (``domain.events.event_row``): a
# second of slack covers the gap, and created_at decides exactly.
_ID_SLACK = timedelta(seconds=1)


def _window_params(hook: Any, window: RecoveryWindow) -> dict[str, Any]:
    """The parameters of the window's queries, for ``hook``: the window starts no earlier than
    the webhook's creation."""
    since = max(window.since, hook.created_at)
    return {
        "webhook_id": hook.id,
        "account_id": hook.account_id,
        "since": since,
        "until": window.until,
        "id_from": _event_id_bound(since - _ID_SLACK),
        "types": list(hook.events) if isinstance(hook.events, list) else [],
    }


async def recover(
    db: Database,
    account_id: str,
    webhook_id: str,
    window: RecoveryWindow,
    *,
    batch: int = RECOVER_BATCH,
) -> int | None:
    """Schedule again what ``webhook_id`` missed in ``window``; returns how many deliveries
    were queued (None: no such webhook; raises ``WebhookNotActive``).

    Every failed or cancelled delivery of the window becomes pending again, due now (a new
    attempt of the same delivery: same ``webhook-id``), then every dispatched event with no
    delivery to it that the fan-out would give it now (``manager.received_by``: its types and
    filter as they are now, never an alert about itself) gets one. Batch by batch: each is
    found by a read (which on SQLite never holds the single writer, however far it scans), then
    written in a short transaction of its own that re-checks, under the webhook's lock, that
    it is still active and that what it changes still needs it. The API's writes and the
    worker go between batches. What succeeded or is pending is never touched, so a second
    identical call queues nothing new. Each commit that queued something wakes the workers
    (``Connection.wakes_workers``): deliveries start while recovery goes on.
    """
    key = {"webhook_id": webhook_id, "account_id": account_id}
    async with db.read() as conn:
        hook = await fetch_one(conn, queries.WEBHOOK_FOR_RECOVERY, key)
    if hook is None:
        return None
    if not hook.is_active:
        raise WebhookNotActive(webhook_id)
    params = _window_params(hook, window)
    queued = 0
    steps = ((queries.FAILED_BATCH, _schedule_again), (queries.MISSED_BATCH, _create_missed))
    for find, apply in steps:
        after = ""
        while True:
            async with db.read() as conn:
                found = await fetch_all(conn, find, {**params, "after": after, "limit": batch})
            if not found:
                break
            async with db.begin() as conn:
                locked = await fetch_one(conn, queries.WEBHOOK_FOR_RECOVERY_LOCKED, key)
                if locked is None or not locked.is_active:
                    return queued  # deleted or disabled meanwhile: stop there
                done = await apply(conn, locked, found)
                conn.wakes_workers |= done > 0
            queued += done
            if len(found) < batch:
                break
            after = found[-1].id
    return queued


async def _schedule_again(conn: Connection, hook: Any, found: Sequence[Any]) -> int:
    """Failed/cancelled deliveries (still so) made due now: a new attempt of each. The fan-out
    gave the webhook each of them, so they are owed whatever its filter says now."""
    ids_ = [row.id for row in found]
    return (await conn.execute(queries.SCHEDULE_AGAIN, {"ids": ids_, "now": utcnow()})).rowcount


async def _create_missed(conn: Connection, hook: Any, found: Sequence[Any]) -> int:
    """A delivery for each missed event that still has none to the webhook and that the
    webhook (as locked: its filter now) receives."""
    params = {"webhook_id": hook.id, "ids": [row.id for row in found]}
    have = {row.event_id for row in await fetch_all(conn, queries.HAVE_DELIVERY, params)}
    missing = await manager.received_by(
        conn, hook, [event for event in found if event.id not in have]
    )
    now = utcnow()
    rows = [manager.delivery_row(event, hook.id, now) for event in missing]
    if rows:
        await conn.execute_many(queries.INSERT_DELIVERY, rows)
    return len(rows)


async def count_recoverable(
    conn: Connection, account_id: str, webhook_id: str, window: RecoveryWindow
) -> int | None:
    """How many deliveries ``recover`` would queue now (the dashboard's preview); None when
    the webhook is not the account's."""
    key = {"webhook_id": webhook_id, "account_id": account_id}
    hook = await fetch_one(conn, queries.WEBHOOK_FOR_RECOVERY, key)
    if hook is None:
        return None
    params = _window_params(hook, window)
    failed = await fetch_one(conn, queries.FAILED_COUNT, params)
    total = int(failed.n) if failed is not None else 0
    # The missed events are walked, not counted in SQL: which the webhook gets is the
    # fan-out's rule (its filter runs on the body), as ``recover`` applies it.
    after = ""
    while found := await fetch_all(
        conn, queries.MISSED_BATCH, {**params, "after": after, "limit": RECOVER_BATCH}
    ):
        total += len(await manager.received_by(conn, hook, found))
        after = found[-1].id
    return total
