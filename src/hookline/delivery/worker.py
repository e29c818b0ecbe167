"""The delivery worker: dispatch events, claim due deliveries, send them, record outcomes.

Loops (tasks), as in procrastinate's worker:

* scheduler: in one transaction (``manager.dispatch_and_claim``), fans outbox events out into
  deliveries and leases due deliveries, never more than there are free send slots (global and per
  endpoint); then starts each POST immediately (see the deletion argument in ``manager``). One
  transaction, not two: a new event's first attempt waits for one COMMIT.
* sends: one task per claimed delivery; the finished attempt goes to a buffer.
* recorder: stores everything in the buffer in one transaction (group commit), repeatedly.
* heartbeat: keeps this worker's leases alive; a dead worker's leases expire and others resend.
* pruner: deletes data older than ``retention_days`` in small batches.
* chores: periodic work of the layers above, each in a loop of its own (``Chore``; the calls
  sweeper, ``domain.calls.sweep_overdue_calls``), run first at start, then every few seconds.
* listener (where the database has NOTIFY): ``LISTEN`` for other processes' wake-ups.
* analyzer (a few times): a young database's delivery tables analyzed as they grow
  (``manager.analyze_young_tables``; nothing to do on SQLite).

Runs inside ``hookline serve`` (started in the FastAPI lifespan) or alone (``hookline worker``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import random
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hookline import ids, metrics, supervisor, tracing
from hookline.caches import remember
from hookline.crypto import SecretBox, resolve_secret_key
from hookline.delivery import filters, manager, notify
from hookline.delivery.endpoint_auth import auth_from_plain
from hookline.delivery.erasure import ErasureJob, run_erasures
from hookline.delivery.erasure import ready as ready_erasures
from hookline.delivery.manager import AttemptRecord, Claim, ClaimMemo, ClaimRequest
from hookline.delivery.retry import (
    CIRCUIT_OPEN_AFTER,
    DeliveryError,
    RandomSource,
    RetryPolicy,
    decide,
    parse_retry_after,
)
from hookline.delivery.sender import AttemptResult, Sender
from hookline.delivery.shaping import shape_of, shaped
from hookline.delivery.signing import (
    build_headers,
    event_body,
    headers_from_plain,
    live_secrets,
)
from hookline.delivery.wakeup import NOTIFY_CHANNEL, Wakeup, make_wakeup
from hookline.settings import Settings
from hookline.storage.db import READY_CONNECTIONS, Database
from hookline.storage.outage import is_store_unavailable
from hookline.timeutil import utcnow

log = logging.getLogger("hookline.delivery")


class _FailureLog:
    """How a loop that retries logs its failures: a bug each time, a database outage twice.

    During an outage every round of a loop fails the same way, once a second
    (``ERROR_BACKOFF_SECONDS``), and a traceback a second buried the one line that mattered.
    An outage (``is_store_unavailable``) is logged once as a warning when it starts and once
    when the loop works again, with how long it lasted; anything else is an error with its
    traceback, every time.
    """

    def __init__(self, what: str) -> None:
        self._what = what
        self._outage_since: float | None = None
        self._failures = 0

    def failed(self, exc: BaseException) -> None:
        if not is_store_unavailable(exc):
            log.error("%s failed; will retry", self._what, exc_info=exc)
            return
        self._failures += 1
        if self._outage_since is None:
            self._outage_since = time.monotonic()
            log.warning(
                "%s failed: the database is unavailable (%s: %s); retrying until it is back",
                self._what,
                type(exc).__name__,
                exc,
            )

    def succeeded(self) -> None:
        if self._outage_since is not None:
            log.warning(
                "%s works again after %.1f s of database outage (%d failed attempts)",
                self._what,
                time.monotonic() - self._outage_since,
                self._failures,
            )
            self._outage_since, self._failures = None, 0


DISPATCH_BATCH = 500
PRUNE_BATCH = 500
PRUNE_INTERVAL_SECONDS = 3600.0
PRUNE_FIRST_DELAY_SECONDS = 60.0
UNHEARD_POLL_SECONDS = 0.02
"""The fan-out's poll while other processes may not wake a new worker yet
(``Wakeup.unheard_seconds``): their commits reach it within milliseconds, not a poll interval."""
# Between prune batches, let the API's writes through (SQLite has one writer).
PRUNE_PAUSE_SECONDS = 0.05
BODY_CACHE_SIZE = 2048
SECRET_CACHE_SIZE = 1024
LISTEN_RETRY_SECONDS = 5.0
ERROR_BACKOFF_SECONDS = 1.0
# The recorder stores outcomes in batches: a batch waits up to RECORD_LINGER_SECONDS for more
# outcomes, unless RECORD_BATCH are waiting (a stopping worker stores at once). Outcomes wait
# in memory only (a crash resends them, as it does a send in flight); storing them later delays
# no send, only the release of their leases. Where every write queues for one writer
# (``DeliveryStore.one_writer``) and the load is light (fewer sends in flight than a
# LIGHT_FRACTION of the slots), a batch gathers for RECORD_LINGER_LIGHT_SECONDS instead, so that
# the next event's commit and round do not queue behind a batch per outcome.
RECORD_BATCH = 64
# A stopping worker's recorder keeps trying to store outcomes at least this long after the
# sends ended, even when they took the whole grace.
DRAIN_SECONDS = 2.0
RECORD_LINGER_SECONDS = 0.005
RECORD_LINGER_LIGHT_SECONDS = 0.05
LIGHT_FRACTION = 4
# With every send slot (or an endpoint's) taken, a finished send wakes the scheduler only once
# an eighth of them is free again.
REFILL_FRACTION = 8
# The two children of the attempts counter, looked up once rather than per attempt.
_ATTEMPT_SUCCEEDED = metrics.ATTEMPTS.labels(result="success")
_ATTEMPT_FAILED = metrics.ATTEMPTS.labels(result="failure")


class SigningFailed(DeliveryError):
    """A stored secret could not be decrypted (wrong HOOKLINE_SECRET_KEY on this worker?).
    Retryable: another worker, or this one once fixed, can still send it."""

    label = "signing failed"


async def _wait(event: asyncio.Event, seconds: float) -> None:
    """Wait for ``event`` at most ``seconds``; clear it before the caller does the work, so a
    wake-up arriving during the work is not lost."""
    if seconds > 0:
        await _unless_set(event, seconds)
    event.clear()


async def _unless_set(event: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds``, or less if ``event`` is set (which stays set)."""
    if not event.is_set():
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await event.wait()


@dataclass(frozen=True, slots=True)
class Chore:
    """Periodic work the worker's process runs beside delivery: ``run(db)`` at start, then
    every ``every_seconds``. It must be safe with several processes running it at once."""

    name: str
    every_seconds: float
    run: Callable[[Database], Awaitable[object]]


def lease_seconds_for(settings: Settings) -> float:
    """Leases outlive the longest possible attempt with room to spare, so a live worker's claim
    is never taken over even if a heartbeat is late."""
    return max(settings.delivery_lease_seconds, 2 * settings.delivery_total_timeout)


class Worker:
    """``await start()`` in a running loop; ``await stop()`` finishes or releases every claim."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        wakeup: Wakeup | None = None,
        sender: Sender | None = None,
        secret_box: SecretBox | None = None,
        rng: RandomSource | None = None,
        worker_id: str | None = None,
        ready_connections: int = READY_CONNECTIONS,
        chores: Sequence[Chore] = (),
    ) -> None:
        self.settings = settings
        self.db = db
        self._chores = tuple(chores)
        filters.configure(filters.Limits.from_settings(settings))
        # How many pooled connections ``start`` readies for the worker's statements (more when
        # the API shares the pool: see app.py).
        self._ready_connections = ready_connections
        self.id = worker_id or f"wrk_{ids.uuid7()}"
        self._owns_wakeup = wakeup is None
        self.wakeup = wakeup if wakeup is not None else make_wakeup(settings, db)
        self.wakeup.serves(self.id)
        self._sender = sender if sender is not None else Sender(settings)
        self._box = secret_box
        self._rng: RandomSource = rng if rng is not None else random.SystemRandom().random
        self._policy = RetryPolicy.from_settings(settings)
        self._lease = lease_seconds_for(settings)
        self._poll = settings.delivery_poll_seconds
        self._disable_after = timedelta(hours=settings.disable_after_hours)
        self._wake = self.wakeup.subscribe()
        # Set by the same wake-ups as _wake, but only by those that mean new events: a round
        # fans out events only after one of them, or once a poll interval (_dispatch_now).
        self._new_events = self.wakeup.subscribe()
        self._dispatched_at = -math.inf
        self._unheard_until = -math.inf
        self._results_ready = asyncio.Event()
        self._batch_full = asyncio.Event()
        self._stopping = asyncio.Event()
        self._draining = False
        self._drain_until = math.inf
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._sends: dict[str, asyncio.Task[None]] = {}
        self._busy: Counter[str] = Counter()
        self._failing_runs: Counter[str] = Counter()
        """Per webhook, its failed attempts in a row that this worker made (a success ends the
        run); with ``_unstored_failures``, what keeps the claims off a failing webhook until
        its circuit opens (_claim_request)."""
        self._unstored_failures: Counter[str] = Counter()
        """Per webhook, the failed attempts the recorder has not stored yet. A run at the
        circuit's threshold with some of it not stored: the claims leave the webhook alone
        until it is, and the circuit, in the database, opens: the stored count alone lets a
        fast failing endpoint take several times the threshold while the recorder lingers."""
        # What the scheduler is waiting for, so that finished sends and recorded outcomes wake
        # it only when that can change what it claims (see _slot_awaited, _retry_is_sooner).
        self._looks_again_at = math.inf
        self._slots_exhausted = False
        self._saturated: frozenset[str] = frozenset()
        self._held: set[str] = set()
        self._claim_memo = ClaimMemo()
        self._results: list[AttemptRecord] = []
        self._oldest_result_at = 0.0
        """When the oldest of ``_results`` finished (monotonic): how long an acknowledged
        outcome waits in memory is what a crash would send again."""
        self._listening = False
        self._bodies: dict[str, bytes] = {}
        self._secrets: dict[str, str] = {}
        self._started = False
        self._peers_seen: set[str] = set()
        self._round_failures = _FailureLog("dispatching or claiming deliveries")
        self._record_failures = _FailureLog("recording delivery outcomes")
        self._heartbeat_failures = _FailureLog("the heartbeat")
        self._mails: set[asyncio.Task[int]] = set()
        # Delivery rows the rounds made, and the count at which the young tables' next look
        # runs (manager.YOUNG_ROWS, then YOUNG_GROWTH times the last look's); None while a look
        # is under way, or once one analyzed nothing.
        self._rows_made = 0
        self._next_look: int | None = manager.YOUNG_ROWS

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        if self._box is None:
            self._box = SecretBox(resolve_secret_key(self.settings))
        await self._sender.start()
        await manager.register_worker(
            self.db, self.id, hostname=socket.gethostname(), pid=os.getpid(), now=utcnow()
        )
        # Other processes may not tell this worker of their commits until they look at the
        # workers again: until then the rounds fan out on a short poll (_next_dispatch_in).
        self._unheard_until = asyncio.get_running_loop().time() + self.wakeup.unheard_seconds
        # Before the first claim: a fresh server's first events otherwise opened the
        # connections and compiled the statements on their own path.
        await manager.ready(
            self.db,
            self.settings.delivery_per_endpoint_concurrency,
            connections=self._ready_connections,
        )
        ready_erasures(self.db)
        self._started = True
        self.wakeup.receive_from_other_processes()
        await self._notice_peers()
        self._spawn("scheduler", self._schedule_loop)
        self._spawn("recorder", self._record_loop)
        self._spawn("heartbeat", self._heartbeat_loop)
        self._spawn("pruner", self._prune_loop)
        for chore in self._chores:
            self._spawn(f"chore {chore.name}", self._chore_loop(chore))
        erasures = ErasureJob(self.db, self._box, self.id)
        erasure_failures = _FailureLog("the erasure job")
        self._spawn("erasures", lambda: run_erasures(erasures, self._stopping, erasure_failures))
        self._spawn("listener", self._listen_loop)
        log.info("delivery worker %s started", self.id)

    async def stop(self, grace: float | None = None) -> None:
        """Stop claiming, give in-flight sends up to ``grace`` seconds (default
        ``HOOKLINE_STOP_GRACE_SECONDS``) to finish, store every outcome, hand back (release)
        whatever did not finish.

        Every outcome a send came back with is stored before the leases are released: a
        receiver's 2xx is never sent again after a stop. The recorder keeps trying until the
        grace is over, and at least ``DRAIN_SECONDS`` after the sends ended."""
        if not self._started:
            return
        self._started = False
        loop = asyncio.get_running_loop()
        if grace is None:
            grace = self.settings.stop_grace_seconds
        deadline = loop.time() + grace
        self._stopping.set()
        self._wake.set()
        await self._join("scheduler")
        await self._finish_sends(deadline - loop.time())
        self._draining = True
        self._drain_until = max(deadline, loop.time() + DRAIN_SECONDS)
        self._results_ready.set()
        self._batch_full.set()
        await self._join("recorder")
        self._forget_unstored()
        await self._cancel_loops()
        await self._release_unfinished()
        if self._mails:
            await asyncio.wait(list(self._mails), timeout=grace)
        with contextlib.suppress(Exception):
            await manager.unregister_worker(self.db, self.id)
        await self._sender.close()
        await self._unsubscribe()
        log.info("delivery worker %s stopped", self.id)

    async def kill(self) -> None:
        """Stop as a crash would: cancel everything, write nothing, keep every lease (they
        expire and other workers resend). For tests of at-least-once delivery."""
        self._started = False
        tasks = [*self._loops.values(), *self._sends.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._loops.clear()
        await self._sender.close()
        await self._unsubscribe()

    @property
    def in_flight(self) -> int:
        return len(self._sends)

    @property
    def listening(self) -> bool:
        """Whether the LISTEN connection is up (wake-ups from other processes)."""
        return self._listening

    def _spawn(self, name: str, loop: Callable[[], Awaitable[None]]) -> None:
        async def guarded() -> None:
            try:
                await loop()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("delivery worker loop %s crashed", name)
                raise

        self._loops[name] = asyncio.create_task(guarded(), name=f"hookline-{name}")

    async def _join(self, *names: str) -> None:
        tasks = [self._loops.pop(name) for name in names if name in self._loops]
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _cancel_loops(self) -> None:
        tasks = list(self._loops.values())
        self._loops.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _finish_sends(self, grace: float) -> None:
        sends = list(self._sends.values())
        if not sends:
            return
        _, unfinished = await asyncio.wait(sends, timeout=max(0.0, grace))
        for task in unfinished:
            task.cancel()
        await asyncio.gather(*unfinished, return_exceptions=True)

    def _forget_unstored(self) -> None:
        """Outcomes still unstored once the stop's time is up (the database would not take
        them): their leases are kept, not released, so those deliveries are sent again only
        when the leases expire, as after a crash."""
        if not self._results:
            return
        log.warning(
            "stopping: %d delivery outcomes could not be stored; those deliveries will be "
            "sent again when their leases expire",
            len(self._results),
        )
        self._held.difference_update(record.delivery_id for record in self._results)
        self._results = []

    async def _release_unfinished(self) -> None:
        leftover = sorted(self._held)
        if not leftover:
            return
        try:
            released = await manager.release_claims(self.db, self.id, leftover)
            log.info("released %d unfinished claims", released)
        except Exception:
            log.warning("could not release claims; their leases will expire", exc_info=True)
        self._held.clear()

    async def _unsubscribe(self) -> None:
        self.wakeup.unsubscribe(self._wake)
        self.wakeup.unsubscribe(self._new_events)
        if self._owns_wakeup:
            await self.wakeup.close()

    # -- scheduler and sends ------------------------------------------------------------------

    async def _schedule_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            # Awake: a retry recorded during the round may be missed by its look at the next due
            # time, so it wakes the scheduler for another; a finished send needn't, since the
            # round itself checks for slots freed while it claimed (_claim_more_now).
            self._looks_again_at = math.inf
            self._slots_exhausted, self._saturated = False, frozenset()
            free = max(0, self.settings.delivery_concurrency - len(self._sends))
            request = self._claim_request(free)
            dispatch = self._dispatch_now(loop.time())
            try:
                dispatched, claims = await manager.dispatch_and_claim(
                    self.db, request, batch_size=DISPATCH_BATCH, dispatch=dispatch
                )
            except Exception as exc:
                self._round_failures.failed(exc)
                if dispatch:
                    self._new_events.set()
                # Not ``_wait``: it clears the event it waited for, and a stop that came during
                # the backoff would be forgotten (the loop went on; SIGTERM waited for a kill).
                await _unless_set(self._stopping, ERROR_BACKOFF_SECONDS)
                continue
            self._round_failures.succeeded()
            self._count_rows(dispatched.deliveries)
            for claim in claims:
                self._start_send(claim)
            if dispatched.events >= DISPATCH_BATCH:
                self._new_events.set()
                continue  # an outbox backlog: keep going without waiting
            if self._claim_more_now(request, claims):
                continue
            if self._wake.is_set():
                # Woken while this round ran (new events, a freed slot): the next round starts
                # at once, so the next due time would be read for nothing; that round looks.
                self._wake.clear()
                continue
            # Every send slot busy: nothing can be claimed before one frees, and a freed one
            # wakes this loop (_slot_awaited), so the next due time is not worth a query.
            idle = self._poll if self._slots_exhausted else await self._idle_timeout(request.now)
            timeout = min(idle, self._next_dispatch_in(loop.time()))
            self._looks_again_at = loop.time() + timeout
            # Marked asleep: rows of an event that wake it hold their batch open for its round
            # (SQLite: one COMMIT for both, storage.db.Database._wake_early).
            with self.wakeup.asleep(self._wake):
                await _wait(self._wake, timeout)

    def _count_rows(self, made: int) -> None:
        """Once the rounds made ``manager.YOUNG_ROWS`` deliveries, and again each
        time they made ``manager.YOUNG_GROWTH`` times as many as at the last look, analyze the
        delivery tables if they are young, beside the rounds (manager.analyze_young_tables:
        until then the cached plans are those made for the tables as they were)."""
        if self._next_look is None:
            return
        self._rows_made += made
        if self._rows_made >= self._next_look:
            self._next_look = None
            looked_at = self._rows_made
            # stopped with the loops
            self._spawn("analyzer", lambda: self._analyze_young_tables(looked_at))

    async def _analyze_young_tables(self, made: int) -> None:
        try:
            analyzed = await manager.analyze_young_tables(self.db)
        except Exception as exc:  # only saves time: autovacuum analyzes them in a minute
            log.warning(
                "analyzing the delivery tables failed (%s: %s); autovacuum will",
                type(exc).__name__,
                exc,
            )
            return
        if analyzed:  # the statistics are this worker's: look again once the tables grew
            self._next_look = made * manager.YOUNG_GROWTH

    def _dispatch_now(self, now: float) -> bool:
        """Whether this round fans out new events: only if a wake-up said events were committed
        since the last fan-out, or a poll interval has passed since (the safety net for a lost
        NOTIFY, or none at all: another process on SQLite). A round woken by a finished send or
        a due retry then costs the claim alone, without an empty fan-out's transaction."""
        if not self._new_events.is_set() and self._next_dispatch_in(now) > 0:
            return False
        self._new_events.clear()
        self._dispatched_at = now
        return True

    def _next_dispatch_in(self, now: float) -> float:
        poll = UNHEARD_POLL_SECONDS if now < self._unheard_until else self._poll
        return max(0.0, self._dispatched_at + poll - now)

    def _claim_more_now(self, request: ClaimRequest, claims: list[Claim]) -> bool:
        """Whether to claim again at once: the claim stopped at a slot limit (all send slots,
        or an endpoint's), so more may be due, and that limit has room again now (an eighth of
        its slots, ``_refilled``). Otherwise remember the limits that are still full: a send
        that finishes under one of them wakes the scheduler (``_slot_awaited``), any other
        doesn't.

        The limits are those of the round's start (``request``): sends that finish while the
        claim runs free slots it did not count, so "full now" is not the same as "capped".
        """
        per_endpoint = request.per_endpoint
        taken = Counter(claim.webhook_id for claim in claims)
        capped = {hook for hook, n in request.busy.items() if n >= per_endpoint}
        capped.update(
            hook for hook, n in taken.items() if n + request.busy.get(hook, 0) >= per_endpoint
        )
        exhausted = len(claims) >= request.limit
        if (exhausted and self._refilled()) or any(self._refilled(hook) for hook in capped):
            return True
        self._slots_exhausted = exhausted
        self._saturated = frozenset(capped)
        return False

    def _slot_awaited(self, webhook_id: str) -> bool:
        # Waking the scheduler after every send cost a whole dispatch + claim transaction per
        # delivery that found nothing to do; new events and due retries wake it on their own.
        if self._slots_exhausted and self._refilled():
            return True
        return webhook_id in self._saturated and self._refilled(webhook_id)

    def _refilled(self, webhook_id: str | None = None) -> bool:
        """Whether enough send slots are free again (all of them, or ``webhook_id``'s) to be
        worth a claim: an eighth of them. A claim for the one slot a finished send freed costs
        as much as one for many."""
        if webhook_id is None:
            limit, busy = self.settings.delivery_concurrency, len(self._sends)
        else:
            limit, busy = self.settings.delivery_per_endpoint_concurrency, self._busy[webhook_id]
        return limit - busy >= max(1, limit // REFILL_FRACTION)

    def _retry_is_sooner(self, records: list[AttemptRecord]) -> bool:
        """Whether a retry just recorded falls due before the scheduler's next look."""
        soonest = min((r.next_attempt_at for r in records if r.next_attempt_at), default=None)
        if soonest is None:
            return False
        remaining = self._looks_again_at - asyncio.get_running_loop().time()
        return (soonest - utcnow()).total_seconds() < remaining

    def _claim_request(self, free: int) -> ClaimRequest:
        per_endpoint = self.settings.delivery_per_endpoint_concurrency
        busy = dict(self._busy)
        for webhook_id, run in self._failing_runs.items():
            if run >= CIRCUIT_OPEN_AFTER and self._unstored_failures[webhook_id]:
                busy[webhook_id] = per_endpoint  # its circuit opens once they are stored
        return ClaimRequest(
            worker_id=self.id,
            now=utcnow(),
            lease_seconds=self._lease,
            limit=free,
            per_endpoint=per_endpoint,
            busy=busy,
            memo=self._claim_memo,
        )

    def _count_outcome(self, record: AttemptRecord) -> None:
        """A success ends its webhook's run of failures; a failure adds to it, unstored. The
        failure that brings a run to the circuit's threshold is stored without the linger: until
        it is, the claims hold the webhook off (_claim_request), and each of its sends that
        finishes meanwhile would wake the scheduler for a claim that takes nothing."""
        if record.succeeded:
            self._failing_runs.pop(record.webhook_id, None)
            return
        self._failing_runs[record.webhook_id] += 1
        self._unstored_failures[record.webhook_id] += 1
        if self._failing_runs[record.webhook_id] >= CIRCUIT_OPEN_AFTER:
            self._batch_full.set()

    def _stored(self, batch: list[AttemptRecord]) -> None:
        """``batch``'s failures are stored: counted by their webhooks' circuits now. A run at
        the threshold with nothing left unstored is the circuit's to pace from here (one probe
        at a time), so it is forgotten, and the count kept per failing webhook stays small."""
        failed = Counter(r.webhook_id for r in batch if not r.succeeded)
        self._unstored_failures -= failed  # -= keeps the positive counts only
        for webhook_id in failed:
            all_stored = webhook_id not in self._unstored_failures
            if all_stored and self._failing_runs[webhook_id] >= CIRCUIT_OPEN_AFTER:
                del self._failing_runs[webhook_id]

    async def _idle_timeout(self, claimed_at: datetime) -> float:
        """Sleep until the earliest scheduled retry, at most one poll interval.

        It looks for retries due after the round's claim (``claimed_at``), not after now: one
        that fell due between the claim and this look was not claimed, and a fresh "now" would
        skip it and sleep a whole poll interval (a CI failure under load). Retries due before
        the claim and left unclaimed are capped by a slot limit; a freed slot wakes for them."""
        try:
            due = await manager.next_due_at(self.db, claimed_at)
        except Exception as exc:
            # An outage is the scheduler's rounds' to report (``_FailureLog``), once; a pooled
            # connection the server dropped fails here first as often as not.
            if not is_store_unavailable(exc):
                log.warning("reading the next due time failed", exc_info=True)
            return self._poll
        if due is None:
            return self._poll
        return min(self._poll, max(0.0, (due - utcnow()).total_seconds()))

    def _start_send(self, claim: Claim) -> None:
        self._busy[claim.webhook_id] += 1
        self._held.add(claim.delivery_id)
        task = asyncio.create_task(self._deliver(claim), name=f"hookline-send-{claim.delivery_id}")
        self._sends[claim.delivery_id] = task

    async def _deliver(self, claim: Claim) -> None:
        try:
            with tracing.attempt_span(claim.trace_context, lambda: _span_attributes(claim)) as span:
                try:
                    result = await self._attempt(claim)
                    if result is None:
                        await self._give_back(claim)  # not sent: no attempt to trace or record
                        return
                except Exception as exc:
                    # A bug must not strand the claim (the heartbeat would keep its lease alive
                    # forever): record a retryable failure instead.
                    log.exception("delivery %s: unexpected error", claim.delivery_id)
                    result = AttemptResult(
                        started_at=utcnow(), duration_ms=0, error=DeliveryError(repr(exc))
                    )
                tracing.end_attempt(
                    span, result.status_code, str(result.error) if result.error else None
                )
                trace = tracing.current_traceparent()
            record = self._record_for(claim, result, trace)
            self._count_outcome(record)
            if not self._results:
                self._oldest_result_at = time.monotonic()
            self._results.append(record)
            self._results_ready.set()
            if len(self._results) >= RECORD_BATCH:
                self._batch_full.set()
        finally:
            self._sends.pop(claim.delivery_id, None)
            self._busy[claim.webhook_id] -= 1
            if self._busy[claim.webhook_id] <= 0:
                del self._busy[claim.webhook_id]
            if self._slot_awaited(claim.webhook_id):
                self._wake.set()

    async def _attempt(self, claim: Claim) -> AttemptResult | None:
        """The attempt's result; None if a rate-limited attempt could not start in its slot."""
        if claim.not_before is not None:
            # A rate-limited webhook's attempt starts when its claim counted it (manager); one
            # this worker reaches too late (a stalled loop) is given back, not sent out of turn.
            await asyncio.sleep((claim.not_before - utcnow()).total_seconds())
            if utcnow() - claim.not_before > manager.RATE_LATENESS:
                return None
        body = self._body(claim)
        try:
            secrets = self._live_secrets(claim)
            custom = self._custom_headers(claim)
            auth = auth_from_plain(self._decrypt(claim.auth_enc)) if claim.auth_enc else None
        except ValueError as exc:
            return AttemptResult(started_at=utcnow(), duration_ms=0, error=SigningFailed(str(exc)))
        headers = build_headers(claim.event_id, int(time.time()), body, secrets)
        if custom:
            # The webhook's own headers never replace ours (reserved names are refused anyway).
            headers = {**custom, **headers}
        return await self._sender.send(claim.url, headers, body, auth)

    async def _give_back(self, claim: Claim) -> None:
        self._held.discard(claim.delivery_id)
        try:
            await manager.give_back_late(self.db, self.id, claim)
        except Exception:
            log.warning("could not give back a late claim; its lease will expire", exc_info=True)
        self._wake.set()

    def _custom_headers(self, claim: Claim) -> dict[str, str]:
        if claim.headers_enc is None:
            return {}
        return headers_from_plain(self._decrypt(claim.headers_enc))

    def _record_for(
        self, claim: Claim, result: AttemptResult, trace_context: str | None = None
    ) -> AttemptRecord:
        finished = utcnow()
        metrics.ATTEMPT_SECONDS.observe(result.duration_ms / 1000)
        decision = decide(
            self._policy,
            attempts_made=claim.attempts + 1,
            status_code=result.status_code,
            error=result.error,
            retry_after=parse_retry_after(result.retry_after, finished),
            rng=self._rng,
        )
        next_at = None
        if decision.delay is not None:
            next_at = finished + timedelta(seconds=decision.delay)
        succeeded = decision.status == "succeeded"
        (_ATTEMPT_SUCCEEDED if succeeded else _ATTEMPT_FAILED).inc()
        return AttemptRecord(
            delivery_id=claim.delivery_id,
            webhook_id=claim.webhook_id,
            result=result,
            decision=decision,
            next_attempt_at=next_at,
            trace_context=trace_context,
        )

    def _body(self, claim: Claim) -> bytes:
        """The event's body as this webhook receives it (``delivery.shaping``)."""
        shape = shape_of(claim.redact, claim.payload, self.settings.public_url)
        return shaped(self._full_body(claim), shape)

    def _full_body(self, claim: Claim) -> bytes:
        """Serialized once per event and shared by its webhooks and attempts."""
        cached = self._bodies.get(claim.event_id)
        if cached is not None:
            return cached
        body = event_body(
            claim.event_id,
            claim.event_type,
            claim.event_created_at,
            claim.data,
            claim.previous_attributes,
        )
        return remember(self._bodies, claim.event_id, body, limit=BODY_CACHE_SIZE)

    def _live_secrets(self, claim: Claim) -> list[str]:
        current = self._decrypt(claim.secret_enc)
        if not claim.previous_secret_enc:
            return [current]  # no rotation under way: no clock to read
        previous = self._decrypt(claim.previous_secret_enc)
        return live_secrets(current, previous, claim.previous_secret_expires_at, utcnow())

    def _decrypt(self, token: str) -> str:
        cached = self._secrets.get(token)
        if cached is not None:
            return cached
        assert self._box is not None
        return remember(self._secrets, token, self._box.decrypt(token), limit=SECRET_CACHE_SIZE)

    # -- recorder -----------------------------------------------------------------------------

    async def _record_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._results_ready.wait()
            if not self._draining and len(self._results) < RECORD_BATCH:
                await _wait(self._batch_full, self._linger())
            self._results_ready.clear()
            self._batch_full.clear()
            if self._results and not await self._flush():
                backoff = ERROR_BACKOFF_SECONDS
                if self._draining:
                    backoff = min(backoff, self._drain_until - loop.time())
                    if backoff <= 0:
                        return  # stopping, and the database would not take them in time
                await asyncio.sleep(backoff)
                self._results_ready.set()
            if self._draining and not self._results:
                return

    def _linger(self) -> float:
        """How long a batch gathers: on SQLite long while few sends are in flight, otherwise
        short."""
        slots = self.settings.delivery_concurrency
        light = self.db.deliveries.one_writer and len(self._sends) < max(1, slots // LIGHT_FRACTION)
        return RECORD_LINGER_LIGHT_SECONDS if light else RECORD_LINGER_SECONDS

    async def _flush(self) -> bool:
        batch, self._results = self._results, []
        since = self._oldest_result_at
        try:
            summary = await manager.record_outcomes(
                self.db, self.id, batch, now=utcnow(), disable_after=self._disable_after
            )
        except Exception as exc:
            self._record_failures.failed(exc)
            self._results = batch + self._results
            self._oldest_result_at = since
            return False
        metrics.OUTCOME_UNSTORED_SECONDS.observe(time.monotonic() - since)
        self._record_failures.succeeded()
        self._held.difference_update(record.delivery_id for record in batch)
        self._stored(batch)
        # Counted once per outcome and batch, not per delivery: a child's look-up by label costs.
        finals = Counter(r.decision.status for r in batch if r.decision.status != "pending")
        for outcome, count in finals.items():
            metrics.DELIVERIES.labels(outcome=outcome).inc(count)
        for webhook_id in summary.disabled_webhooks:
            log.warning("webhook %s disabled", webhook_id)
        if summary.disabled_webhooks:
            self._mail_about(summary.disabled_webhooks)
        if summary.alerts:
            # Alert events were committed with the outcomes: fan them out now.
            self._events_committed_elsewhere()
        if self._retry_is_sooner(batch):
            self._wake.set()
        return True

    def _mail_about(self, webhook_ids: tuple[str, ...]) -> None:
        """Mail the accounts' people about webhooks just disabled, after the commit and
        without holding up the recorder (SMTP is the network)."""
        task = asyncio.create_task(
            notify.mail_disabled_webhooks(self.settings, self.db, webhook_ids),
            name="hookline-mail",
        )
        self._mails.add(task)
        task.add_done_callback(self._mails.discard)

    # -- heartbeat, pruning, LISTEN -----------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        interval = self._lease / 3
        while True:
            await asyncio.sleep(interval)
            try:
                await manager.heartbeat(
                    self.db, self.id, sorted(self._held), now=utcnow(), lease_seconds=self._lease
                )
                await self._notice_peers()
            except Exception as exc:
                self._heartbeat_failures.failed(exc)
            else:
                self._heartbeat_failures.succeeded()

    async def _notice_peers(self) -> None:
        """Say so when another worker starts sharing this database's deliveries.

        Nothing is sent twice (leases), but each delivery goes out with the settings of whichever
        process claims it (allowed targets, secret key, retry schedule, timeouts). On PostgreSQL
        several workers are the design (info); on SQLite a second server is usually a mistake,
        such as a forgotten `hookline serve` in another terminal (warning).
        """
        peers = await manager.live_peers(
            self.db, self.id, now=utcnow(), within=timedelta(seconds=self._lease)
        )
        for peer in peers:
            if peer.id in self._peers_seen:
                continue
            self._peers_seen.add(peer.id)
            # A process of the same `hookline serve --workers N` is the design: not news to
            # anyone reading the log, and never a reason to "stop one".
            if supervisor.is_sibling(peer.hostname, peer.pid):
                log.debug("delivery worker %s of this serve started", peer.id)
                continue
            log.log(
                logging.WARNING if self.db.deliveries.one_writer else logging.INFO,
                "another delivery worker shares this database: %s (host %s, pid %s); each "
                "delivery is sent once, by whichever worker claims it, with that process's "
                "settings. If that is not intended, stop one (docs/operations.md)",
                peer.id,
                peer.hostname,
                peer.pid,
                extra={"worker_id": self.id, "peer_worker_id": peer.id},
            )

    def _chore_loop(self, chore: Chore) -> Callable[[], Awaitable[None]]:
        failures = _FailureLog(chore.name)

        async def loop() -> None:
            while True:
                try:
                    await chore.run(self.db)
                    failures.succeeded()
                except Exception as exc:
                    failures.failed(exc)
                await asyncio.sleep(chore.every_seconds)

        return loop

    async def _prune_loop(self) -> None:
        await asyncio.sleep(PRUNE_FIRST_DELAY_SECONDS)
        while True:
            try:
                await self.prune()
                await manager.reap_dead_workers(
                    self.db, now=utcnow(), older_than=timedelta(seconds=10 * self._lease)
                )
            except Exception:
                log.exception("pruning old events failed")
            await asyncio.sleep(PRUNE_INTERVAL_SECONDS)

    async def prune(self) -> int:
        """Delete everything older than the retention period, batch by batch."""
        total = 0
        while True:
            removed = await manager.prune_batch(
                self.db,
                now=utcnow(),
                retention_days=self.settings.retention_days,
                batch=PRUNE_BATCH,
            )
            total += removed
            if removed < PRUNE_BATCH:
                await manager.prune_rollups(
                    self.db, now=utcnow(), retention_days=self.settings.retention_days
                )
                return total
            await asyncio.sleep(PRUNE_PAUSE_SECONDS)

    def on_notify(self, payload: str) -> None:
        """Called with each NOTIFY's payload: the sender's ``Wakeup.origin``."""
        if payload == self.wakeup.origin:
            return  # our own process's NOTIFY: its events already woke us locally
        self._events_committed_elsewhere()

    def _events_committed_elsewhere(self) -> None:
        self._new_events.set()
        self._wake.set()

    async def _listen_loop(self) -> None:
        """The database's dedicated connection LISTENing for other processes' wake-ups; none
        where the database has no NOTIFY (SQLite's wake-ups are datagrams)."""
        failures = _FailureLog("LISTEN (wake-ups from other processes; polling meanwhile)")
        while True:
            lost: asyncio.Event | None = None
            try:
                lost = await self.db.listen(NOTIFY_CHANNEL, self.on_notify)
                if lost is None:
                    return
                failures.succeeded()
                self._listening = True
                self._events_committed_elsewhere()  # anything notified while not listening
                await lost.wait()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures.failed(exc)
            finally:
                self._listening = False
                if lost is not None:
                    await self.db.unlisten(lost)
            await asyncio.sleep(LISTEN_RETRY_SECONDS)


def _span_attributes(claim: Claim) -> dict[str, Any]:
    return {
        "hookline.event.id": claim.event_id,
        "hookline.event.type": claim.event_type,
        "hookline.delivery.id": claim.delivery_id,
        "hookline.webhook.id": claim.webhook_id,
        "hookline.attempt": claim.attempts + 1,
    }


async def run_worker(
    settings: Settings, db: Database, stop: asyncio.Event, chores: Sequence[Chore] = ()
) -> None:
    """``hookline worker``: run until ``stop`` is set (e.g. by SIGTERM), then stop cleanly."""
    tracing.configure_from_environment()
    worker = Worker(settings, db, chores=chores)
    await worker.start()
    try:
        await stop.wait()
    finally:
        await worker.stop()
