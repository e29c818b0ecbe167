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
from hookline.storage.queries import replay
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


SENT_STATUSES = ("failed", "cancelled", "succeeded")
MISSED = "missed"
DEFAULT_STATUSES = ("failed", "cancelled", MISSED)


@dataclass(frozen=True)
class ReplayFilter:
    """What a recovery takes besides its window: events of ``types`` only (None: every type),
    about ``object_id`` only; deliveries in ``statuses`` (of ``SENT_STATUSES``, and
    ``"missed"`` for events the webhook never got); ``backfill``: the window may reach before
    the webhook existed (a new webhook gets history of its types)."""

    types: tuple[str, ...] | None = None
    object_id: str | None = None
    statuses: tuple[str, ...] = DEFAULT_STATUSES
    backfill: bool = False

    def shape(self) -> replay.Shape:
        return replay.Shape(types=self.types is not None, object_id=self.object_id is not None)

    def sent_statuses(self) -> list[str]:
        return [status for status in SENT_STATUSES if status in self.statuses]


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


def _window_params(hook: Any, window: RecoveryWindow, wanted: ReplayFilter) -> dict[str, Any]:
    """The parameters of the window's queries, for ``hook``: the window starts no earlier than
    the webhook's creation, unless backfilling; missed events are of the types it subscribes
    to (and the filter's)."""
    since = window.since if wanted.backfill else max(window.since, hook.created_at)
    subscribed = list(hook.events) if isinstance(hook.events, list) else []
    if wanted.types is not None:
        subscribed = [t for t in subscribed if t in wanted.types]
    return {
        "webhook_id": hook.id,
        "account_id": hook.account_id,
        "since": since,
        "until": window.until,
        "id_from": _event_id_bound(since - _ID_SLACK),
        "types": subscribed,
        "event_types": list(wanted.types or ()),
        "object_id": wanted.object_id,
        "statuses": wanted.sent_statuses(),
    }


def _steps(wanted: ReplayFilter) -> list[tuple[Any, Any, str]]:
    """(the batch query, what it does, its key's parameter) for each part ``wanted`` asks."""
    shape = wanted.shape()
    steps = []
    if wanted.sent_statuses():
        steps.append((replay.DELIVERIES_BATCH.get(shape), _schedule_again, "event_types"))
    if MISSED in wanted.statuses:
        steps.append((replay.MISSED_BATCH.get(shape), _create_missed, "types"))
    return steps


async def recover(
    db: Database,
    account_id: str,
    webhook_id: str,
    window: RecoveryWindow,
    wanted: ReplayFilter = ReplayFilter(),
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
    params = _window_params(hook, window, wanted)
    queued = 0
    for find, apply, types in _steps(wanted):
        after = ""
        while True:
            async with db.read() as conn:
                page = {**params, "types": params[types], "after": after, "limit": batch}
                found = await fetch_all(conn, find, page)
            if not found:
                break
            async with db.begin() as conn:
                locked = await fetch_one(conn, queries.WEBHOOK_FOR_RECOVERY_LOCKED, key)
                if locked is None or not locked.is_active:
                    return queued  # deleted or disabled meanwhile: stop there
                done = await apply(conn, locked, found, params["statuses"])
                conn.wakes_workers |= done > 0
            queued += done
            if len(found) < batch:
                break
            after = found[-1].id
    return queued


async def _schedule_again(
    conn: Connection, hook: Any, found: Sequence[Any], statuses: list[str]
) -> int:
    """Deliveries still in one of ``statuses`` made due now: a new attempt of each. The
    fan-out gave the webhook each of them, so they are owed whatever its filter says now."""
    params = {"ids": [row.id for row in found], "statuses": statuses, "now": utcnow()}
    return (await conn.execute(replay.SCHEDULE_AGAIN, params)).rowcount


async def _create_missed(
    conn: Connection, hook: Any, found: Sequence[Any], statuses: list[str]
) -> int:
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
    conn: Connection,
    account_id: str,
    webhook_id: str,
    window: RecoveryWindow,
    wanted: ReplayFilter = ReplayFilter(),
) -> int | None:
    """How many deliveries ``recover`` would queue now (the dashboard's preview); None when
    the webhook is not the account's."""
    key = {"webhook_id": webhook_id, "account_id": account_id}
    hook = await fetch_one(conn, queries.WEBHOOK_FOR_RECOVERY, key)
    if hook is None:
        return None
    params = _window_params(hook, window, wanted)
    total = 0
    if wanted.sent_statuses():
        counted = {**params, "types": params["event_types"]}
        sent = await fetch_one(conn, replay.DELIVERIES_COUNT.get(wanted.shape()), counted)
        total = int(sent.n) if sent is not None else 0
    if MISSED not in wanted.statuses:
        return total
    # The missed events are walked, not counted in SQL: which the webhook gets is the
    # fan-out's rule (its filter runs on the body), as ``recover`` applies it.
    after, missed = "", replay.MISSED_BATCH.get(wanted.shape())
    while found := await fetch_all(
        conn, missed, {**params, "after": after, "limit": RECOVER_BATCH}
    ):
        total += len(await manager.received_by(conn, hook, found))
        after = found[-1].id
    return total
