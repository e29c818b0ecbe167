"""The delivery engine's decisions (as procrastinate's ``manager.py``): what to fan out, what to
claim, what an outcome changes. Its statements are in ``storage.queries.deliveries`` (and
``storage.queries.workers``); this module runs them and never builds SQL.

Life of a delivery
------------------
1. The API writes an ``events`` row (``dispatched=false``) in the same transaction as the change
   it describes: the transactional outbox. Once the API call returned, the event is durable.
2. ``dispatch_events`` fans undispatched events out into one ``deliveries`` row per active,
   subscribed webhook and marks the events dispatched, in one transaction per batch. A crash
   before commit leaves the events undispatched; they are dispatched again, never lost.
3. ``claim_due`` leases due deliveries to a worker (``leased_by``/``leased_until``). The worker
   sends at once and heartbeats extend its leases. A worker that dies leaves leases that expire;
   an expired lease is claimable again, so the delivery is re-sent (at least once: duplicates are
   possible, loss is not). The worker runs steps 2 and 3 in one transaction
   (``dispatch_and_claim``), so a new event waits for one COMMIT before its first attempt.
4. ``record_outcomes`` stores the attempts and the deliveries' next state for a whole batch of
   sends in one transaction.

Deleting a webhook: no attempt starts after DELETE returns
----------------------------------------------------------
DELETE removes the webhook row and, by ``ON DELETE CASCADE``, its deliveries, in one transaction.
An attempt starts only for a claim, and the worker starts the POST as soon as the claim
transaction commits (it never claims into a local queue: it claims no more than it has free
send slots for). So an attempt can start only if its claim committed *before* the DELETE:

* SQLite: one writer at a time (``BEGIN IMMEDIATE``). The claim transaction either runs before
  the DELETE transaction (the attempt was started before DELETE returned) or after it (the
  deliveries are gone: nothing to claim).
* PostgreSQL: the claim locks the rows it takes (``FOR UPDATE OF deliveries SKIP LOCKED``) and
  JOINs the webhook. The cascade must lock the same delivery rows, so a DELETE that reaches them
  first makes the claim skip them, and a claim that locked them first makes the DELETE wait for
  the claim to commit. Either the claim committed before the DELETE did, or it never sees the
  rows.

Deactivation (``is_active=false``, by PATCH or by us after 410 / long failure) cancels pending
deliveries in the same transaction (``cancel_pending_deliveries``), so the same reasoning holds:
the cancel UPDATE takes the same row locks as the claim.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline import ids
from hookline.delivery import filters, stats
from hookline.delivery.payloads import delivery_out, webhook_out
from hookline.delivery.retry import CIRCUIT_OPEN_AFTER, Decision, probe_delay
from hookline.delivery.sender import AttemptResult
from hookline.delivery.signing import event_payload
from hookline.storage.db import (
    READY_CONNECTIONS,
    Connection,
    Database,
    DeliveryStore,
    Outcomes,
    fetch_all,
    fetch_one,
)
from hookline.storage.outage import is_transaction_conflict
from hookline.storage.outbox import record_event
from hookline.storage.queries import deliveries as queries
from hookline.storage.queries import webhooks as webhook_queries
from hookline.storage.queries import workers as worker_queries
from hookline.timeutil import iso, utcnow

# Alerts about one webhook (events.about_webhook_id): never delivered to that webhook.
ALERT_EVENT_TYPES = ("webhook.disabled", "delivery.exhausted")
LAST_ERROR_LIMIT = 1000
log = logging.getLogger("hookline.delivery")


# -- dispatch: events -> deliveries ----------------------------------------------------------


@dataclass(frozen=True)
class DispatchResult:
    events: int
    deliveries: int


def _subscribed(webhook_events: Any, event_type: str) -> bool:
    return isinstance(webhook_events, list) and event_type in webhook_events


async def dispatch_events(db: Database, *, now: datetime, batch_size: int = 500) -> DispatchResult:
    """Fan out one batch of undispatched events, in event id (creation) order.

    A first attempt is due from the moment its event happened (``next_attempt_at`` =
    ``events.created_at``, never later than now), and deliveries get time-ordered ids in event
    order; claims go by (next_attempt_at, id), so a webhook's first attempts start in event
    order. Distinct due times also keep the claim query cheap: rows due at the same instant
    must all be sorted by id before the first can be taken.
    """
    filters.judge().wakes(db.events_committed)
    async with db.begin() as conn:
        dispatched, _ = await _dispatch(db.deliveries, conn, now, batch_size, None)
        return dispatched


async def _dispatch(
    store: DeliveryStore,
    conn: Connection,
    now: datetime,
    batch_size: int,
    req: ClaimRequest | None,
) -> tuple[DispatchResult, list[Claim]]:
    """Fan one batch out in ``conn``'s transaction and, given ``req``, claim after it: the look
    (the events, their webhooks, rate-limited work), the deliveries' INSERT, the rate-limited
    claim when the look found due work or a new delivery is a rate-limited webhook's (the look
    cannot see the rows just inserted), then the events' numbering with the claim."""
    look = await store.look(conn, limit=batch_size, now=now)
    hooks: dict[str, list[_Target]] = {}
    for row in look.webhooks:
        hooks.setdefault(row.account_id, []).append(_Target(row.id, row.events, row.filter))
    fanned = await _fanned_out(conn, look.events, hooks, now) if look.events else _NOTHING
    if look.events:
        await store.insert(conn, fanned.rows)
    event_ids = [event.id for event in fanned.events]
    dispatched = DispatchResult(len(event_ids), len(fanned.rows))
    if req is None:
        await store.number_and_claim(conn, event_ids, None)
        return dispatched, []
    limited_hooks = {row.id for row in look.webhooks if row.rate_limited}
    new_limited = any(row["webhook_id"] in limited_hooks for row in fanned.rows)
    req.memo.rate_limited_due = look.rate_limited_due or new_limited
    limited: list[Claim] = []
    if req.memo.rate_limited_due and req.limit > 0:
        limited = await _claim_rate_limited(store, conn, req)
    rest = _after(req, limited)
    if rest.limit <= 0:
        await store.number_and_claim(conn, event_ids, None)
        return dispatched, limited
    claimed = await store.number_and_claim(conn, event_ids, _claim_params(rest))
    return dispatched, limited + [_claim_of(row) for row in claimed]


@dataclass(frozen=True, slots=True)
class _FannedOut:
    rows: list[dict[str, Any]]
    """The new deliveries."""
    events: list[Any]
    """The events fanned out; the others wait for their filters' verdicts."""


_NOTHING = _FannedOut([], [])


async def _fanned_out(
    conn: Connection, pending: Sequence[Any], hooks: Mapping[str, list[_Target]], now: datetime
) -> _FannedOut:
    """The delivery rows of ``pending`` events for the active webhooks ``hooks`` (by account).

    No filter runs here, inside the transaction: an event some filter has no verdict on yet is
    handed to the judge (``filters.FilterJudge``, its own process) and left undispatched, and
    so is every later event of its account, which must not overtake it; the judge wakes the
    workers when verdicts are ready, and a later round fans the event out. Verdicts the limits
    cut count as false and add to the webhook's ``filter_errors``."""
    bodies = await _bodies_for_filters(conn, pending, hooks)
    judge = filters.judge()
    waiting: set[str] = set()
    cut: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    events: list[Any] = []
    for event in pending:
        if event.account_id in waiting or not _judged(judge, event, hooks, bodies):
            waiting.add(event.account_id)
            continue
        events.append(event)
        rows += [
            delivery_row(event, hook_id, now) for hook_id in _targets(event, hooks, judge, cut)
        ]
    if cut:
        await conn.execute_many(
            webhook_queries.ADD_FILTER_ERRORS,
            [{"webhook_id": hook_id, "cut": n} for hook_id, n in sorted(cut.items())],
        )
    return _FannedOut(rows, events)


@dataclass(frozen=True, slots=True)
class _Target:
    id: str
    events: Any
    filter: str | None


def _targets(
    event: Any, hooks: Mapping[str, list[_Target]], judge: filters.FilterJudge, cut: Counter[str]
) -> list[str]:
    candidates = hooks.get(event.account_id, [])
    if event.target_webhook_id is not None:
        # webhook.test (or any targeted event): that webhook alone, subscribed or not, filtered
        # or not.
        return [hook.id for hook in candidates if hook.id == event.target_webhook_id]
    return [hook.id for hook in candidates if _receives(hook, event, judge, cut)]


def _filtered(event: Any, hooks: Mapping[str, list[_Target]]) -> list[_Target]:
    """The webhooks whose filter decides whether they get ``event`` (the rest of the rule
    passes)."""
    if event.target_webhook_id is not None:
        return []
    return [
        hook
        for hook in hooks.get(event.account_id, [])
        if hook.filter is not None and _wants(hook, event)
    ]


def _judged(
    judge: filters.FilterJudge,
    event: Any,
    hooks: Mapping[str, list[_Target]],
    bodies: Mapping[str, dict[str, Any]],
) -> bool:
    """Whether every filter on ``event`` has a verdict; asks the judge for those missing."""
    missing = False
    for hook in _filtered(event, hooks):
        key = _verdict_key(hook, event)
        if judge.verdict(key) is None:
            judge.ask(event.account_id, key, bodies[event.id])
            missing = True
    return not missing


def _verdict_key(hook: _Target, event: Any) -> filters.Key:
    return (event.id, hook.id, hook.filter or "")


def _wants(hook: _Target, event: Any) -> bool:
    """It subscribes to the type, and the event is not an alert about that very webhook (an
    alert goes to the account's other webhooks)."""
    return _subscribed(hook.events, event.type) and hook.id != event.about_webhook_id


def _receives(hook: _Target, event: Any, judge: filters.FilterJudge, cut: Counter[str]) -> bool:
    """Whether ``hook`` gets the untargeted ``event``: ``_wants`` and its CEL filter, if any,
    was true for the body as delivered (the judge's verdict, taken; ``_judged`` made sure
    there is one)."""
    if not _wants(hook, event):
        return False
    if hook.filter is None:
        return True
    key = _verdict_key(hook, event)
    outcome = judge.verdict(key)
    judge.forget(key)
    if outcome is filters.Outcome.CUT:
        cut[hook.id] += 1
    return outcome is filters.Outcome.MATCH


async def received_by(conn: Connection, hook: Any, candidates: Sequence[Any]) -> list[Any]:
    """The candidate events that the fan-out's rule (``_wants`` and the filter) gives to
    ``hook`` (a row with id, account_id, events and filter); bodies are read only for a
    filter, which the judge evaluates (awaited, off the event loop). Recovery
    (``domain.recovery``) asks it which missed events a webhook is owed."""
    target = _Target(hook.id, hook.events, hook.filter)
    wanted = [event for event in candidates if _wants(target, event)]
    if target.filter is None:
        return wanted
    bodies = await _bodies_for_filters(conn, wanted, {hook.account_id: [target]})
    judge = filters.judge()
    return [
        event
        for event in wanted
        if await judge.evaluate(hook.account_id, target.filter, bodies[event.id])
        is filters.Outcome.MATCH
    ]


async def _bodies_for_filters(
    conn: Connection, pending: Sequence[Any], hooks: Mapping[str, list[_Target]]
) -> dict[str, dict[str, Any]]:
    """The delivered bodies of the events a filtered webhook may receive (filters see the body
    as delivered); read only when some webhook of the event's account has a filter."""
    filtered = {account for account, targets in hooks.items() if any(t.filter for t in targets)}
    wanted = [e.id for e in pending if e.account_id in filtered and e.target_webhook_id is None]
    if not wanted:
        return {}
    return {
        row.id: event_payload(row.id, row.type, row.created_at, row.data, row.previous_attributes)
        for row in await fetch_all(conn, queries.EVENT_BODIES, {"ids": wanted})
    }


def delivery_row(event: Any, webhook_id: str, now: datetime) -> dict[str, Any]:
    """A new pending delivery of ``event`` to ``webhook_id`` (the fan-out's, and recovery's for
    an event the webhook missed)."""
    return {
        "id": ids.delivery_id(),
        "account_id": event.account_id,
        "webhook_id": webhook_id,
        "event_id": event.id,
        "event_type": event.type,
        "status": "pending",
        "attempts": 0,
        # min(): a clock skew between API and worker hosts must not postpone the delivery.
        "next_attempt_at": min(event.created_at, now),
        "last_status_code": None,
        "last_error": None,
        "leased_by": None,
        "leased_until": None,
        "created_at": now,
        "updated_at": now,
    }


# -- claiming ---------------------------------------------------------------------------------


# Not frozen: a claim is made for every attempt, and a frozen dataclass's __init__ is slower.
# Nothing changes one once made (``replace`` makes another).
@dataclass(slots=True)
class Claim:
    """A leased delivery with everything needed to send it."""

    delivery_id: str
    webhook_id: str
    attempts: int
    """Attempts made before this one."""
    url: str
    secret_enc: str
    previous_secret_enc: str | None
    previous_secret_expires_at: datetime | None
    event_id: str
    event_type: str
    event_created_at: datetime
    data: Any
    """The event's data (``signing.EventJson``): on SQLite its stored JSON, not decoded."""
    previous_attributes: Any
    headers_enc: str | None = None
    """The webhook's custom headers, encrypted (``domain.webhook_routing.unseal``)."""
    not_before: datetime | None = None
    """A rate-limited webhook's attempt: the moment it was counted as starting; the worker
    starts it no earlier."""
    trace_context: str | None = None
    """The W3C traceparent stored with the event: the attempt's span joins that trace."""
    auth_enc: str | None = None
    """The webhook's ``auth``, encrypted (``delivery.endpoint_auth.auth_from_plain``)."""
    redact: Any = None
    payload: str | None = None
    """The webhook's ``redact`` paths and ``payload`` (``delivery.shaping``)."""


@dataclass
class ClaimMemo:
    """What a worker's claims learnt for its next ones."""

    rate_limited_due: bool = True
    """Whether the last look found a rate-limited webhook with due work. While it did, each
    claim takes those first (in a transaction of its own); while none was, the look runs
    beside the claim of the others instead of before it (``claim_due``)."""


@dataclass(frozen=True)
class ClaimRequest:
    worker_id: str
    now: datetime
    lease_seconds: float
    limit: int
    """Free send slots of the worker: never claim more than can start at once."""
    per_endpoint: int
    busy: Mapping[str, int] = field(default_factory=dict)
    """In-flight sends per webhook in this worker."""
    memo: ClaimMemo = field(default_factory=ClaimMemo)
    """The worker's, kept from claim to claim; a fresh one looks for rate-limited work first."""


async def claim_due(db: Database, req: ClaimRequest) -> list[Claim]:
    """Lease up to ``req.limit`` due deliveries of active webhooks, at most ``per_endpoint``
    in flight per webhook (counting ``req.busy``), the longest-waiting webhooks first.

    Claims go webhook by webhook, so a hanging endpoint's backlog costs nothing to step over.
    Rate-limited webhooks are claimed by their window's rule (below), the others by the store's
    claim (``storage.deliverystore``), which also decides the round's transactions: concurrent
    workers take disjoint rows without waiting.
    """
    if req.limit <= 0:
        return []  # no transaction for nothing
    return await db.deliveries.claim_round(db, _Round(db.deliveries, req))


@dataclass(frozen=True, slots=True)
class _Round:
    """A claim round as the store runs it (``storage.deliverystore.ClaimRound``)."""

    store: DeliveryStore
    req: ClaimRequest

    @property
    def limit(self) -> int:
        return self.req.limit

    @property
    def rate_limited_first(self) -> bool:
        return self.req.memo.rate_limited_due

    async def look(self, db: Database) -> bool:
        return await _any_rate_limited_due(db, self.req)

    async def claim_rate_limited(self, conn: Connection) -> list[Any]:
        return await _claim_rate_limited(self.store, conn, self.req)

    def rest(self, taken: Sequence[Any]) -> _Round:
        return _Round(self.store, _after(self.req, taken))

    def params(self) -> dict[str, Any]:
        return _claim_params(self.req)

    def claims(self, rows: Sequence[Any]) -> list[Any]:
        return [_claim_of(row) for row in rows]


def _claim_params(req: ClaimRequest) -> dict[str, Any]:
    return queries.claim_params(
        worker=req.worker_id,
        now=req.now,
        until=req.now + timedelta(seconds=req.lease_seconds),
        limit=req.limit,
        per_endpoint=req.per_endpoint,
        busy=req.busy,
        saturated=_saturated(req),
        open_after=CIRCUIT_OPEN_AFTER,
        probe_room=PROBE_ROOM,
    )


# A webhook whose circuit is open (``retry.circuit_open``) is claimed one delivery at a time.
PROBE_ROOM = 1


def _saturated(req: ClaimRequest) -> list[str]:
    """Webhooks whose every slot is busy in this worker: not even probed."""
    return sorted(hook for hook, n in req.busy.items() if n >= req.per_endpoint)


# -- rate-limited webhooks ----------------------------------------------------------------
#
# A webhook with ``rate_limit`` N gets at most N attempt starts in any one-second window
# (sliding). Its claims are counted in its own row (``rate_starts``: [[start in epoch
# microseconds, attempts], ...] of the last second): a claim reads the window, takes no more
# than the room left, and writes its own entry, all while holding the webhook row (FOR NO KEY
# UPDATE SKIP LOCKED on PostgreSQL: another worker skips that webhook until this claim commits,
# and then reads the updated window; SQLite's single writer serializes claims anyway). So the
# limit holds across any number of workers. A claim is an attempt start: the worker posts each
# claim as soon as the claim commits. Attempts over the limit stay due; ``next_due_at`` wakes
# the worker when the window has room again, so they wait and never fail for it.

RATE_WINDOW_US = 1_000_000
# A claim's attempts start after the claim commits, which can take tens of milliseconds on a
# busy machine (an fsync on SQLite), and unevenly: measured starts then crowded more than the
# limit into a window. So a claim schedules its attempts a little ahead (``not_before``, the
# time it records) and the worker holds each until then; what is left is the worker's own
# lateness past that moment, which the margin covers.
RATE_START_DELAY_US = 50_000
RATE_MARGIN_US = 25_000
# A worker that reaches an attempt later than this past its slot gives it back (released, to
# be claimed again in a later window): an attempt then never starts outside the margin.
RATE_LATENESS = timedelta(microseconds=RATE_MARGIN_US - 2_000)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _epoch_us(moment: datetime) -> int:
    """Exact (integer arithmetic): a window entry and its claim's ``not_before`` must match."""
    return (moment - _EPOCH) // _MICROSECOND


def _from_epoch_us(value: int) -> datetime:
    return _EPOCH + value * _MICROSECOND


def rate_window(starts: Any, start_us: int) -> list[list[int]]:
    """The entries of ``starts`` still inside the one-second window (plus the margin) ending
    at ``start_us``."""
    if not isinstance(starts, list):
        return []
    horizon = start_us - RATE_WINDOW_US - RATE_MARGIN_US
    return [[int(t), int(n)] for t, n in starts if int(t) > horizon]


def rate_room(limit: int, window: Sequence[Sequence[int]]) -> int:
    return limit - sum(n for _, n in window)


def rate_reopens_at(limit: int, window: Sequence[Sequence[int]]) -> int | None:
    """When (epoch µs) a claim would find room for one more start; None if it has room now."""
    used = sum(n for _, n in window)
    if used < limit:
        return None
    for start, count in sorted(window, key=lambda entry: entry[0]):
        used -= count
        if used < limit:
            return start + RATE_WINDOW_US + RATE_MARGIN_US - RATE_START_DELAY_US
    return None


def plan_starts(
    limit: int, starts: Any, count: int, now: datetime
) -> tuple[list[datetime], list[list[int]]]:
    """Attempts sent outside a claim (the receiver check's probes, ``domain.outbound``): when
    each of ``count`` may start, each at the earliest moment the window has room by the claim's
    own rule, and the window to store with them (held like a claim holds it)."""
    at = _epoch_us(now) + RATE_START_DELAY_US
    window = rate_window(starts, at)
    planned: list[datetime] = []
    for _ in range(count):
        reopens = rate_reopens_at(limit, rate_window(window, at))
        if reopens is not None:
            at = reopens + RATE_START_DELAY_US
        window.append([at, 1])
        planned.append(_from_epoch_us(at))
    return planned, window


def _after(req: ClaimRequest, claims: Sequence[Claim]) -> ClaimRequest:
    """``req`` for the rest of a round once ``claims`` were taken."""
    if not claims:
        return req
    return replace(req, limit=req.limit - len(claims))


async def _any_rate_limited_due(db: Database, req: ClaimRequest) -> bool:
    """Whether a rate-limited webhook has due work (remembered in ``req.memo``; a look that
    fails leaves the next round looking first)."""
    try:
        due = bool(await fetch_all(db, queries.ANY_RATE_LIMITED_DUE, {"now": req.now}))
    except Exception:
        req.memo.rate_limited_due = True
        raise
    req.memo.rate_limited_due = due
    return due


async def _claim_rate_limited(
    store: DeliveryStore, conn: Connection, req: ClaimRequest
) -> list[Claim]:
    params = {"now": req.now, "saturated": _saturated(req)}
    picked: list[str] = []
    windows: list[dict[str, Any]] = []
    locked = await fetch_all(conn, queries.RATE_LIMITED_TO_CLAIM, params)
    # The clock is read once the rows are held (the round's ``req.now`` may be well before, if
    # the transaction waited for a lock).
    start_us = _epoch_us(utcnow()) + RATE_START_DELAY_US
    for hook in locked:
        window = rate_window(hook.rate_starts, start_us)
        room = min(
            req.limit - len(picked),
            req.per_endpoint - req.busy.get(hook.id, 0),
            rate_room(hook.rate_limit, window),
        )
        if room <= 0:
            continue
        due = await fetch_all(
            conn, queries.RATE_LIMITED_DUE_ROWS, {"hook": hook.id, "now": req.now, "limit": room}
        )
        if due:
            picked.extend(row.id for row in due)
            windows.append({"b_id": hook.id, "b_starts": [*window, [start_us, len(due)]]})
        if len(picked) >= req.limit:
            break
    if not picked:
        return []
    until = req.now + timedelta(seconds=req.lease_seconds)
    await conn.execute(
        queries.LEASE, {"ids": picked, "b_worker": req.worker_id, "b_until": until, "now": req.now}
    )
    await conn.execute_many(queries.SET_RATE_STARTS, windows)
    not_before = _from_epoch_us(start_us)
    claims = await store.load_claims(conn, picked)
    return [replace(_claim_of(row), not_before=not_before) for row in claims]


async def give_back_late(db: Database, worker_id: str, claim: Claim) -> None:
    """A rate-limited attempt the worker reached too late to start in its slot: release the
    lease and give the slot back to the window (it never started), in one transaction, so a
    stalled worker slows its webhook no more than the stall itself."""
    assert claim.not_before is not None
    start_us = _epoch_us(claim.not_before)
    async with db.begin() as conn:
        await conn.execute(queries.RELEASE, {"ids": [claim.delivery_id], "b_worker": worker_id})
        row = await fetch_one(conn, queries.RATE_STARTS_OF, {"hook": claim.webhook_id})
        if row is None or not isinstance(row.rate_starts, list):
            return
        window = [[int(t), int(n)] for t, n in row.rate_starts]
        for entry in window:
            if entry[0] == start_us and entry[1] > 0:
                entry[1] -= 1
                break
        kept = [entry for entry in window if entry[1] > 0]
        await conn.execute(queries.SET_RATE_STARTS, {"b_id": claim.webhook_id, "b_starts": kept})


async def _rate_limit_reopens(conn: Connection, now: datetime) -> datetime | None:
    """The earliest moment a rate-limited webhook with due work has room again."""
    now_us = _epoch_us(now)
    reopens = [
        rate_reopens_at(hook.rate_limit, rate_window(hook.rate_starts, now_us))
        for hook in await fetch_all(conn, queries.RATE_LIMITED_WAITING, {"now": now})
    ]
    soonest = min((at for at in reopens if at is not None), default=None)
    if soonest is None:
        return None
    return _from_epoch_us(soonest)


async def dispatch_and_claim(
    db: Database, req: ClaimRequest, *, batch_size: int = 500, dispatch: bool = True
) -> tuple[DispatchResult, list[Claim]]:
    """``dispatch_events`` then ``claim_due`` in one transaction: what the worker runs.

    A new event's first attempt then waits for one COMMIT instead of two. Dispatch runs even
    when ``req.limit`` is 0, so events become deliveries (visible in the API as pending) while
    every send slot is busy.

    ``dispatch=False`` (the worker knows of no new event) is ``claim_due`` alone, with no
    transaction around it when the claim needs none.
    """
    if not dispatch:
        return DispatchResult(0, 0), await claim_due(db, req)
    filters.judge().wakes(db.events_committed)
    async with db.begin() as conn:
        return await _dispatch(db.deliveries, conn, req.now, batch_size, req)


async def ready(db: Database, per_endpoint: int, connections: int = READY_CONNECTIONS) -> None:
    """The worker's statements made ready before its first round (``Worker.start``): a fresh
    process's first events otherwise paid for opening connections and compiling or parsing
    each statement. A failure is logged and the worker starts anyway: this only saves time."""
    await db.deliveries.ready(db, per_endpoint=per_endpoint, connections=connections)


# How many delivery rows a worker's rounds make before it first looks whether the delivery
# tables are young (``analyze_young_tables``), and by how much that count then grows before
# each next look, for as long as the looks analyze.
YOUNG_ROWS = 200
YOUNG_GROWTH = 2


async def analyze_young_tables(db: Database) -> bool:
    """Refresh the planner's statistics of the delivery tables while they are young and growing
    (``DeliveryStore.analyze_if_young``); whether it did. ``Worker`` calls it once its rounds
    made ``YOUNG_ROWS`` deliveries, and again each time they made ``YOUNG_GROWTH`` times as
    many, until a call analyzes nothing (the statistics keep up: autovacuum's, or an old
    table's). A role that does not own the tables gets the database's warning and no
    statistics; autovacuum analyzes them later either way."""
    return await db.deliveries.analyze_if_young(db)


def _claim_of(row: Any) -> Claim:
    return Claim(
        delivery_id=row.id,
        webhook_id=row.webhook_id,
        attempts=row.attempts,
        url=row.url,
        secret_enc=row.secret_enc,
        previous_secret_enc=row.previous_secret_enc,
        previous_secret_expires_at=row.previous_secret_expires_at,
        event_id=row.event_id,
        event_type=row.type,
        event_created_at=row.created_at,
        data=row.data,
        previous_attributes=row.previous_attributes,
        headers_enc=row.headers_enc,
        trace_context=row.trace_context,
        auth_enc=row.auth_enc,
        redact=row.redact,
        payload=row.payload,
    )


async def next_due_at(db: Database, now: datetime) -> datetime | None:
    """When, after ``now``, the next claim can find work: the earliest scheduled attempt of a
    webhook whose circuit is closed, an open circuit's next probe (if it has work waiting: its
    retries are held back until then, so they wake nothing sooner), or a rate-limited webhook's
    window reopening for its waiting attempts, to sleep exactly until then."""
    params = {"now": now, "open_after": CIRCUIT_OPEN_AFTER}
    async with db.read() as conn:
        rows = await fetch_all(conn, queries.NEXT_WAKES, params)
        reopens = await _rate_limit_reopens(conn, now)
    wakes = [_claimable_at(row.due, row.probe) for row in rows]
    return min((at for at in (*wakes, reopens) if at is not None and at > now), default=None)


def _claimable_at(due: datetime | None, probe: datetime | None) -> datetime | None:
    """A webhook's oldest pending attempt ``due``, held back until ``probe`` if its circuit
    is open: the later of the two (None: nothing pending)."""
    if due is None or probe is None:
        return due
    return max(due, probe)


# -- outcomes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptRecord:
    """One finished attempt and the delivery's next state (decided by ``retry.decide``)."""

    delivery_id: str
    webhook_id: str
    result: AttemptResult
    decision: Decision
    next_attempt_at: datetime | None
    trace_context: str | None = None
    """The attempt span's traceparent (tracing on): alerts it causes continue its trace."""

    @property
    def finished_at(self) -> datetime:
        return self.result.started_at + timedelta(milliseconds=self.result.duration_ms)

    @property
    def succeeded(self) -> bool:
        return self.decision.status == "succeeded"

    @property
    def retry_at(self) -> datetime | None:
        """When the delivery is tried next: only while it stays pending."""
        return self.next_attempt_at if self.decision.status == "pending" else None


@dataclass(frozen=True)
class OutcomeSummary:
    recorded: int
    disabled_webhooks: tuple[str, ...] = ()
    alerts: int = 0
    """Alert events written (webhook.disabled, delivery.exhausted): the worker dispatches them."""


async def record_outcomes(
    db: Database,
    worker_id: str,
    records: Sequence[AttemptRecord],
    *,
    now: datetime,
    disable_after: timedelta,
) -> OutcomeSummary:
    """Store a batch of finished attempts in one transaction (group commit).

    Every attempt of a delivery that still exists is stored, and counted in the rollups. The
    delivery's state changes only if this worker still holds its lease: a lease that expired
    and was taken over belongs to the new holder (whose own attempt will be recorded too).
    A delivery that failed for good gets its ``delivery.exhausted`` event, and a webhook its
    health (``_update_webhook_health``), in the same transaction.

    The storing is the store's (``DeliveryStore.record``); a batch whose every attempt
    succeeded leaves nothing to decide in Python and is stored as a transaction of its own
    (``record_succeeded``: on PostgreSQL one statement in autocommit).

    A batch that PostgreSQL rolls back to break a deadlock or a serialization conflict is
    stored again at once (up to ``CONFLICT_RETRIES`` times): its outcomes were acknowledged
    by receivers, and a batch given up would send them again.
    """
    if not records:
        return OutcomeSummary(0)
    retries = 0
    while True:
        try:
            return await _record_outcomes(db, worker_id, records, now, disable_after)
        except Exception as exc:
            if retries >= CONFLICT_RETRIES or not is_transaction_conflict(exc):
                raise
            retries += 1
            log.warning("recording delivery outcomes met a conflict (%s); storing again", exc)


CONFLICT_RETRIES = 5
"""How many times ``record_outcomes`` stores a batch again after a deadlock or serialization
failure before the error reaches the recorder (which backs off and tries again)."""


async def _record_outcomes(
    db: Database,
    worker_id: str,
    records: Sequence[AttemptRecord],
    now: datetime,
    disable_after: timedelta,
) -> OutcomeSummary:
    store = db.deliveries
    outcomes = Outcomes(worker_id, now, [_outcome_values(r) for r in records], _ROLLUP)
    if all(r.succeeded for r in records):
        return OutcomeSummary(await store.record_succeeded(db, outcomes))
    async with db.begin() as conn:
        recorded = await store.record(conn, outcomes)
        existing = [records[n] for n in recorded.stored]
        return await _alert_and_judge(conn, existing, recorded.exhausted, now, disable_after)


# The rollups' constants, for the statement that counts in SQL (``delivery.stats``).
_ROLLUP: dict[str, Any] = {
    "spans": list(stats.SPANS),
    "any_status": stats.ANY_STATUS,
    "any_latency": stats.ANY_LATENCY,
}


def _outcome_values(record: AttemptRecord) -> tuple[Any, ...]:
    """One attempt's values, in ``queries.OUTCOME_NAMES``' order."""
    result = record.result
    return (
        record.delivery_id,
        record.webhook_id,
        result.started_at,
        result.duration_ms,
        result.status_code,
        _cut(result.error_message),
        result.response_body,
        record.succeeded,
        record.decision.status,
        record.retry_at,
        int(result.started_at.timestamp()),
        stats.status_key(result.status_code),
        stats.latency_bin(result.duration_ms),
    )


async def _alert_and_judge(
    conn: Connection,
    existing: Sequence[AttemptRecord],
    exhausted: Sequence[Any],
    now: datetime,
    disable_after: timedelta,
) -> OutcomeSummary:
    """What follows the storing, in its transaction: the alerts about deliveries that failed
    for good, and the health of each webhook with a failed attempt among ``existing`` (the
    others were healed by the storing)."""
    alerts = await _alert_exhausted(conn, exhausted, existing)
    failing = {r.webhook_id for r in existing if not r.succeeded}
    judged = [r for r in existing if r.webhook_id in failing]
    disabled = await _update_webhook_health(conn, judged, now, disable_after)
    return OutcomeSummary(len(existing), tuple(disabled), alerts + len(disabled))


async def _alert_exhausted(
    conn: Connection, exhausted: Sequence[Any], records: Sequence[AttemptRecord]
) -> int:
    """A ``delivery.exhausted`` event for each delivery whose last attempt just failed
    (``exhausted``: their rows), in the transaction that records it. Not for deliveries of
    alerts: two failing endpoints that subscribe to each other's alerts would otherwise feed
    each other forever."""
    if not exhausted:
        return 0
    traces = {r.delivery_id: r.trace_context for r in records if r.decision.status == "failed"}
    alerted = [row for row in exhausted if row.event_type not in ALERT_EVENT_TYPES]
    for row in sorted(alerted, key=lambda row: row.id):
        await record_event(
            conn,
            row.account_id,
            "delivery.exhausted",
            delivery_out(row),
            about_webhook_id=row.webhook_id,
            trace_context=traces.get(row.id),
        )
    return len(alerted)


def _cut(text: str | None, limit: int = LAST_ERROR_LIMIT) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "…"


async def _update_webhook_health(
    conn: Connection,
    records: Sequence[AttemptRecord],
    now: datetime,
    disable_after: timedelta,
) -> list[str]:
    """Track each webhook's run of consecutive failures and its circuit (``retry.probe_delay``);
    disable it after a 410, or when the run has lasted ``disable_after``. Returns the ids of
    webhooks disabled now. A healthy webhook's row is only read."""
    if not records:
        return []
    hook_ids = sorted({r.webhook_id for r in records})
    rows = await fetch_all(conn, queries.WEBHOOK_HEALTH, {"ids": hook_ids})
    by_webhook: dict[str, list[AttemptRecord]] = {}
    for record in sorted(records, key=lambda r: r.finished_at):
        by_webhook.setdefault(record.webhook_id, []).append(record)
    disabled: list[str] = []
    changes: list[dict[str, Any]] = []
    for row in sorted(rows, key=lambda row: row.id):
        mine = by_webhook[row.id]
        failing_since, reason = _health_after(row.failing_since, mine, now, disable_after)
        change = _circuit_after(row, mine, failing_since)
        if change is not None:
            changes.append(change)
        if reason is not None and row.is_active:
            await disable_webhook(conn, row.id, reason, now=now, trace_context=_trace_of(mine))
            disabled.append(row.id)
    await conn.execute_many(queries.SET_HEALTH, changes)
    return disabled


def _circuit_after(
    row: Any, records: Sequence[AttemptRecord], failing_since: datetime | None
) -> dict[str, Any] | None:
    """``SET_HEALTH``'s parameters after these attempts (in time order), None if unchanged."""
    last_success = max((i for i, r in enumerate(records) if r.succeeded), default=None)
    failures = len(records) - (0 if last_success is None else last_success + 1)
    kept = 1 if last_success is None else 0
    run = row.consecutive_failures * kept + failures
    probe_at = None
    if failures:
        last = records[-1].finished_at
        delay = probe_delay(run, (last - (failing_since or last)).total_seconds())
        probe_at = last + timedelta(seconds=delay) if delay is not None else None
    unchanged = (failing_since, run, probe_at) == (
        row.failing_since,
        row.consecutive_failures,
        row.next_probe_at,
    )
    if unchanged:
        return None
    return {
        "b_id": row.id,
        "b_since": failing_since,
        "b_kept": kept,
        "b_failures": failures,
        "b_probe": probe_at,
    }


def _health_after(
    failing_since: datetime | None,
    records: Sequence[AttemptRecord],
    now: datetime,
    disable_after: timedelta,
) -> tuple[datetime | None, str | None]:
    """(new failing_since, reason to disable or None) after these attempts, in time order."""
    reason: str | None = None
    for record in records:
        if record.succeeded:
            failing_since = None
            continue
        failing_since = failing_since or record.result.started_at
        if record.decision.disable_webhook:
            reason = "the endpoint answered 410 Gone"
    if reason is None and failing_since is not None and now - failing_since >= disable_after:
        hours = disable_after.total_seconds() / 3600
        reason = (
            f"every delivery failed for {hours:g} hours (since {iso(failing_since)}); "
            f"last error: {_last_failure(records)}"
        )
    return failing_since, reason


def _last_failure(records: Sequence[AttemptRecord]) -> str:
    for record in reversed(records):
        if not record.succeeded:
            if record.result.status_code is not None:
                return f"HTTP {record.result.status_code}"
            return record.result.error_message or "unknown"
    return "unknown"


def _trace_of(records: Sequence[AttemptRecord]) -> str | None:
    return next((r.trace_context for r in reversed(records) if r.trace_context), None)


async def disable_webhook(
    conn: Connection,
    webhook_id: str,
    reason: str,
    *,
    now: datetime,
    trace_context: str | None = None,
) -> None:
    """Deactivate a webhook for ``reason`` (shown on the dashboard), cancel what it had
    pending (inactive webhooks get nothing) and write its ``webhook.disabled`` event, all in
    the caller's transaction."""
    disabling = {"webhook_id": webhook_id, "reason": reason[:500], "now": now}
    row = (await conn.execute(queries.DISABLE_WEBHOOK, disabling)).one()
    await cancel_pending_deliveries(conn, webhook_id, now=now)
    await record_event(
        conn,
        row.account_id,
        "webhook.disabled",
        webhook_out(row),
        about_webhook_id=webhook_id,
        trace_context=trace_context,
    )


async def disabled_webhooks(conn: Connection, webhook_ids: Sequence[str]) -> list[Any]:
    """What the mail about each disabled webhook says: id, account, url, name, reason."""
    return await fetch_all(conn, queries.DISABLED_WEBHOOKS, {"ids": list(webhook_ids)})


async def cancel_pending_deliveries(conn: Connection, webhook_id: str, *, now: datetime) -> int:
    """Mark a webhook's pending deliveries cancelled. Call it in the same transaction that sets
    ``is_active=false`` (PATCH). An attempt already in flight finishes; its outcome is stored
    as an attempt but leaves the delivery cancelled."""
    result = await conn.execute(queries.CANCEL_PENDING, {"webhook_id": webhook_id, "now": now})
    return int(result.rowcount or 0)


# -- leases and workers -----------------------------------------------------------------------


async def register_worker(
    db: Database, worker_id: str, *, hostname: str, pid: int, now: datetime
) -> None:
    row = {
        "id": worker_id,
        "hostname": hostname[:255],
        "pid": pid,
        "started_at": now,
        "heartbeat_at": now,
    }
    async with db.begin() as conn:
        await conn.execute(worker_queries.REGISTER, row)


async def live_peers(
    db: Database, worker_id: str, *, now: datetime, within: timedelta
) -> list[Any]:
    """The other workers on this database that heartbeat within ``within`` (id, hostname, pid,
    started_at), oldest first."""
    peers = {"worker_id": worker_id, "since": now - within}
    async with db.read() as conn:
        return list(await conn.execute(worker_queries.LIVE_PEERS, peers))


async def heartbeat(
    db: Database,
    worker_id: str,
    held: Sequence[str],
    *,
    now: datetime,
    lease_seconds: float,
) -> int:
    """Prove this worker alive and extend the leases it still holds; returns how many."""
    until = now + timedelta(seconds=lease_seconds)
    extended = 0
    async with db.begin() as conn:
        await conn.execute(worker_queries.HEARTBEAT, {"worker_id": worker_id, "now": now})
        if held:
            leased = {"ids": list(held), "b_worker": worker_id, "b_until": until}
            extended = (await conn.execute(queries.EXTEND_LEASES, leased)).rowcount
    return extended


async def release_claims(db: Database, worker_id: str, delivery_ids: Sequence[str]) -> int:
    """Give back leases whose attempt did not complete (graceful stop): another worker, or
    this one after a restart, may send them right away instead of after the lease expires."""
    if not delivery_ids:
        return 0
    async with db.begin() as conn:
        released = {"ids": list(delivery_ids), "b_worker": worker_id}
        return (await conn.execute(queries.RELEASE, released)).rowcount


async def unregister_worker(db: Database, worker_id: str) -> None:
    async with db.begin() as conn:
        await conn.execute(worker_queries.UNREGISTER, {"worker_id": worker_id})


async def reap_dead_workers(db: Database, *, now: datetime, older_than: timedelta) -> int:
    """Forget workers that stopped heartbeating. Their leases need no repair: an expired lease
    is claimable as it is."""
    async with db.begin() as conn:
        result = await conn.execute(worker_queries.REAP_SILENT, {"before": now - older_than})
    return int(result.rowcount or 0)


# -- retention ---------------------------------------------------------------------------


async def prune_batch(db: Database, *, now: datetime, retention_days: int, batch: int) -> int:
    """Delete up to ``batch`` dispatched events older than the retention period, with their
    deliveries and attempts (ON DELETE CASCADE). Small batches keep each write transaction
    short: the API's writes queue behind it on SQLite."""
    cutoff = now - timedelta(days=retention_days)
    async with db.begin() as conn:
        expired = {"cutoff": cutoff, "limit": batch}
        doomed = (await conn.scalars(queries.EXPIRED_EVENTS, expired)).all()
        if not doomed:
            return 0
        await conn.execute(queries.DELETE_EVENTS, {"ids": list(doomed)})
    return len(doomed)


async def prune_rollups(db: Database, *, now: datetime, retention_days: int) -> int:
    """Delete statistics older than the retention period (run hourly: about an hour of
    buckets each time)."""
    async with db.begin() as conn:
        return await stats.prune_rollups(conn, now - timedelta(days=retention_days))
