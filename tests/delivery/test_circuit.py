"""The per-endpoint circuit (``retry.circuit_open``): an endpoint failing every attempt is only
probed, one delivery at a time and paced, until a success closes it; its neighbours are not
held up. On SQLite and PostgreSQL, with real receivers for the worker's part."""

from __future__ import annotations

import itertools
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from hookline.delivery import manager
from hookline.delivery import wakeup as wakeup_module
from hookline.delivery import worker as worker_module
from hookline.delivery.manager import AttemptRecord, ClaimRequest
from hookline.delivery.retry import CIRCUIT_OPEN_AFTER, Decision
from hookline.delivery.sender import AttemptResult
from hookline.delivery.worker import Worker
from hookline.domain.deliveries import insert_test_event, retry_delivery
from hookline.domain.webhooks import update_webhook
from hookline.storage.models import webhooks
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env
from tests.support.receiver import Receiver, RecordedRequest
from tests.support.waiting import eventually

URL = "http://127.0.0.1:9/hook"
LEASE_SECONDS = 30


def request(
    worker: str = "w1", busy: dict[str, int] | None = None, per_endpoint: int = 8
) -> ClaimRequest:
    return ClaimRequest(
        worker_id=worker,
        now=utcnow(),
        lease_seconds=LEASE_SECONDS,
        limit=100,
        per_endpoint=per_endpoint,
        busy=busy or {},
    )


def outcome(claim: manager.Claim, status: int, finished: datetime) -> AttemptRecord:
    ok = 200 <= status < 300
    return AttemptRecord(
        delivery_id=claim.delivery_id,
        webhook_id=claim.webhook_id,
        result=AttemptResult(started_at=finished, duration_ms=0, status_code=status),
        decision=Decision("succeeded") if ok else Decision("pending", delay=60),
        next_attempt_at=None if ok else finished + timedelta(seconds=60),
    )


async def set_circuit(env: Env, webhook_id: str, **values: Any) -> None:
    async with env.db.begin() as conn:
        await conn.execute(update(webhooks).where(webhooks.c.id == webhook_id).values(**values))


async def hooks_with_events(env: Env, count: int) -> tuple[str, str, str]:
    """An account with a failing-to-be and a healthy webhook, ``count`` events dispatched."""
    account = await env.account()
    failing, _ = await env.webhook(account, URL)
    healthy, _ = await env.webhook(account, URL)
    for _ in range(count):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    return account, failing, healthy


async def record(env: Env, records: list[AttemptRecord]) -> None:
    await manager.record_outcomes(
        env.db, "w1", records, now=utcnow(), disable_after=timedelta(hours=120)
    )


async def test_an_open_circuit_is_claimed_one_probe_at_a_time_once_its_probe_is_due(
    env: Env,
) -> None:
    _, failing, healthy = await hooks_with_events(env, 5)
    await set_circuit(
        env,
        failing,
        consecutive_failures=CIRCUIT_OPEN_AFTER,
        next_probe_at=utcnow() + timedelta(hours=1),
    )

    first = await manager.claim_due(env.db, request())
    assert [c.webhook_id for c in first] == [healthy] * 5  # the open one is not due to probe

    await set_circuit(env, failing, next_probe_at=utcnow() - timedelta(seconds=1))
    [probe] = await manager.claim_due(env.db, request())
    assert probe.webhook_id == failing
    # The probe's claim holds the next one back until its outcome is recorded (or its lease ends).
    row = await env.webhook_row(failing)
    assert row.next_probe_at > utcnow() + timedelta(seconds=LEASE_SECONDS - 5)
    assert await manager.claim_due(env.db, request("w2")) == []


async def test_one_failure_short_of_the_threshold_claims_as_usual(env: Env) -> None:
    _, failing, _ = await hooks_with_events(env, 5)
    await set_circuit(
        env,
        failing,
        consecutive_failures=CIRCUIT_OPEN_AFTER - 1,
        next_probe_at=utcnow() + timedelta(hours=1),
    )
    claims = await manager.claim_due(env.db, request())
    assert sum(c.webhook_id == failing for c in claims) == 5


async def test_a_probe_in_flight_in_this_worker_leaves_no_room(env: Env) -> None:
    _, failing, healthy = await hooks_with_events(env, 3)
    await set_circuit(env, failing, consecutive_failures=CIRCUIT_OPEN_AFTER, next_probe_at=None)
    claims = await manager.claim_due(env.db, request(busy={failing: 1}))
    assert {c.webhook_id for c in claims} == {healthy}


async def test_failures_count_up_open_the_circuit_and_a_success_closes_it(env: Env) -> None:
    _, failing, _ = await hooks_with_events(env, CIRCUIT_OPEN_AFTER + 1)
    claimed = await manager.claim_due(env.db, request(per_endpoint=100))
    claims = [c for c in claimed if c.webhook_id == failing]
    started = utcnow()

    await record(env, [outcome(claims[0], 500, started)])
    row = await env.webhook_row(failing)
    assert (row.consecutive_failures, row.next_probe_at) == (1, None)

    # Two batches: the run is counted in SQL, across batches (and workers).
    last = started + timedelta(seconds=20)
    rest = claims[1:CIRCUIT_OPEN_AFTER]
    await record(env, [outcome(c, 503, last) for c in rest])
    row = await env.webhook_row(failing)
    assert row.consecutive_failures == CIRCUIT_OPEN_AFTER
    # Failing for 20 s: the next probe a tenth of that after the last failure.
    assert row.next_probe_at == last + timedelta(seconds=2)

    await record(env, [outcome(claims[-1], 204, last + timedelta(seconds=1))])
    row = await env.webhook_row(failing)
    assert (row.consecutive_failures, row.next_probe_at, row.failing_since) == (0, None, None)


async def test_a_batch_counts_only_the_failures_after_its_last_success(env: Env) -> None:
    _, failing, _ = await hooks_with_events(env, 4)
    claims = [c for c in await manager.claim_due(env.db, request()) if c.webhook_id == failing]
    await set_circuit(env, failing, consecutive_failures=50)
    t = utcnow()
    statuses = [500, 204, 500, 500]
    await record(
        env,
        [
            outcome(c, s, t + timedelta(seconds=i))
            for i, (c, s) in enumerate(zip(claims, statuses, strict=True))
        ],
    )
    row = await env.webhook_row(failing)
    assert row.consecutive_failures == 2
    assert row.next_probe_at is None  # below the threshold again


async def test_an_open_circuits_retries_wake_the_scheduler_at_its_probe_not_when_due(
    env: Env,
) -> None:
    _, failing, healthy = await hooks_with_events(env, 2)
    now = utcnow()
    probe_at = now + timedelta(minutes=30)
    await set_circuit(env, failing, consecutive_failures=CIRCUIT_OPEN_AFTER, next_probe_at=probe_at)
    soon, later = now + timedelta(seconds=30), now + timedelta(minutes=10)
    for delivery in await env.deliveries(webhook_id=failing):
        await env.set_delivery(delivery.id, next_attempt_at=soon)  # held back by the circuit
    first, second = await env.deliveries(webhook_id=healthy)
    await env.set_delivery(first.id, next_attempt_at=later)
    await env.set_delivery(second.id, status="succeeded")
    # The healthy endpoint's retry, not the open circuit's retries, which no claim takes sooner.
    assert await manager.next_due_at(env.db, now) == later

    await set_circuit(env, failing, consecutive_failures=CIRCUIT_OPEN_AFTER - 1)
    assert await manager.next_due_at(env.db, now) == soon  # closed: due when scheduled


async def test_an_open_circuit_with_work_waiting_wakes_the_scheduler_at_its_next_probe(
    env: Env,
) -> None:
    _, failing, healthy = await hooks_with_events(env, 1)
    [done] = await env.deliveries(webhook_id=healthy)
    await env.set_delivery(done.id, status="succeeded")
    now = utcnow()
    probe_at = now + timedelta(seconds=2)
    await set_circuit(env, failing, consecutive_failures=CIRCUIT_OPEN_AFTER, next_probe_at=probe_at)
    # Its delivery is due already; the claim takes it once the probe is: the scheduler sleeps
    # until then, not a poll interval.
    assert await manager.next_due_at(env.db, now) == probe_at
    # A probe already due (held by a slot limit) or nothing pending: no wake-up from it.
    assert await manager.next_due_at(env.db, probe_at + timedelta(seconds=1)) is None
    await set_circuit(env, failing, is_active=False)
    assert await manager.next_due_at(env.db, now) is None


async def test_a_manual_retry_makes_the_probe_due_at_once(env: Env) -> None:
    account, failing, _ = await hooks_with_events(env, 1)
    [delivery] = await env.deliveries(webhook_id=failing)
    await set_circuit(
        env, failing, consecutive_failures=40, next_probe_at=utcnow() + timedelta(minutes=5)
    )
    assert all(c.webhook_id != failing for c in await manager.claim_due(env.db, request()))
    async with env.db.begin() as conn:
        await retry_delivery(conn, account, failing, delivery.id, now=utcnow())
    [probe] = await manager.claim_due(env.db, request("w2"))
    assert probe.delivery_id == delivery.id


def _outcome(webhook_id: str, ok: bool) -> AttemptRecord:
    return AttemptRecord(
        delivery_id="dlv_x",
        webhook_id=webhook_id,
        result=AttemptResult(started_at=utcnow(), duration_ms=0, status_code=204 if ok else 500),
        decision=Decision("succeeded") if ok else Decision("pending", delay=60),
        next_attempt_at=None,
    )


async def test_a_workers_claims_leave_a_webhook_alone_from_its_thresholds_failure_until_stored(
    env: Env,
) -> None:
    """The run counts stored failures and unstored ones alike: six stored (the database's
    circuit still closed) and four more not yet stored keep the claims off the webhook, until
    those four are stored too (the circuit, in the database, paces it from there). A success
    ends the run."""
    worker = Worker(env.settings(), env.db, secret_box=env.box)  # not started: its bookkeeping
    per_endpoint = env.settings().delivery_per_endpoint_concurrency

    def left_alone() -> bool:
        return worker._claim_request(16).busy.get("wh_a", 0) == per_endpoint

    first = [_outcome("wh_a", ok=False) for _ in range(6)]
    for record in first:
        worker._count_outcome(record)
    worker._stored(first)
    assert not left_alone()
    then = [_outcome("wh_a", ok=False) for _ in range(CIRCUIT_OPEN_AFTER - 6)]
    for record in then:
        worker._count_outcome(record)
    assert left_alone()
    worker._stored(then)
    assert not left_alone()  # the stored circuit paces it now
    worker._count_outcome(_outcome("wh_a", ok=False))  # a probe that failed: one at a time
    assert not left_alone()
    for _ in range(CIRCUIT_OPEN_AFTER):
        worker._count_outcome(_outcome("wh_a", ok=False))
    worker._count_outcome(_outcome("wh_a", ok=True))
    assert not left_alone(), "a success ends the run"


async def test_a_failing_endpoint_is_probed_not_hammered_and_a_success_resumes_it(
    env: Env,
) -> None:
    """Worker end to end: 60 events to a failing and a healthy endpoint. The healthy one gets
    all 60 at once; the failing one gets its first attempts until the circuit opens, then one
    probe at a time no sooner than a second apart; once it answers 2xx, the rest follow."""
    account = await env.account()
    # The burst before the circuit opens: the threshold, plus the sends in flight or being
    # claimed when the threshold's failure came back (the worker counts failures it has not
    # stored yet; counting only the stored ones, a fast host sent 30-35 here).
    events, per_endpoint = 60, 2
    async with Receiver() as failing, Receiver() as healthy:
        failing.respond(500)
        failing_id, _ = await env.webhook(account, failing.url)
        await env.webhook(account, healthy.url)
        await env.worker(delivery_per_endpoint_concurrency=per_endpoint)
        for _ in range(events):
            await env.event(account)

        await healthy.wait_for(events)
        opened = await eventually(
            lambda: env.webhook_row(failing_id),
            until=lambda row: row.consecutive_failures >= CIRCUIT_OPEN_AFTER,
        )
        assert opened.next_probe_at is not None
        # The first attempts go out until the failures are recorded (the threshold, plus what
        # was sent while the recorder caught up); then single probes, each a second or more
        # after the attempt before, three of them here.
        requests = await failing.wait_until(
            lambda got: _paced(got) >= 3, timeout=30, description="three probes"
        )
        burst = len(requests) - _paced(requests)
        assert CIRCUIT_OPEN_AFTER <= burst <= CIRCUIT_OPEN_AFTER + 2 * per_endpoint, burst
        assert len(requests) < events  # the other first attempts still wait

        failing.respond(204)
        failed = {r.headers["webhook-id"] for r in failing.requests if r.reply.status == 500}
        # Every event not yet failed follows once a probe succeeds; those that failed keep
        # their scheduled retry (60 s here): the circuit never brings a due time forward.
        await failing.wait_until(
            lambda got: (
                len({r.headers["webhook-id"] for r in got if r.reply.status == 204})
                == events - len(failed)
            ),
            timeout=30,
        )
        closed = await eventually(
            lambda: env.webhook_row(failing_id), until=lambda row: row.consecutive_failures == 0
        )
        waiting = await eventually(
            lambda: env.deliveries(webhook_id=failing_id, status="pending"),
            until=lambda rows: len(rows) == len(failed),
        )
        assert {d.event_id for d in waiting} == failed
        assert all(d.next_attempt_at > utcnow() + timedelta(seconds=20) for d in waiting)
    assert closed.next_probe_at is None and closed.failing_since is None


async def test_the_failure_that_opens_the_circuit_is_stored_without_the_linger(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a failing endpoint's run reaches the threshold, the claims hold it off until the
    recorder stores the run (the circuit opens in the database), and each of its sends that
    finishes meanwhile wakes the scheduler for a claim that takes nothing: ~120 empty write
    transactions in SQLite's 50 ms linger. So those failures are
    stored at once: here, with a 5 s linger, the circuit opens in a fraction of it and the
    scheduler's rounds until then are a few, not thousands."""
    linger = 5.0
    monkeypatch.setattr(worker_module, "RECORD_LINGER_SECONDS", linger)
    monkeypatch.setattr(worker_module, "RECORD_LINGER_LIGHT_SECONDS", linger)
    # No short fan-out poll for a new PostgreSQL worker (Wakeup.unheard_seconds): its rounds
    # would be counted too.
    monkeypatch.setattr(wakeup_module, "LOOK_SECONDS", 0.0)
    rounds = 0
    claim = manager.dispatch_and_claim

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal rounds
        rounds += 1
        return await claim(*args, **kwargs)

    monkeypatch.setattr(manager, "dispatch_and_claim", counted)
    account = await env.account()
    async with Receiver() as failing:
        failing.respond(500)
        failing_id, _ = await env.webhook(account, failing.url)
        for _ in range(3 * CIRCUIT_OPEN_AFTER):
            await env.event(account)
        started = time.monotonic()
        worker = await env.worker(delivery_poll_seconds=30, delivery_per_endpoint_concurrency=4)
        worker.wakeup.events_committed()
        await eventually(
            lambda: env.webhook_row(failing_id),
            until=lambda row: row.consecutive_failures >= CIRCUIT_OPEN_AFTER,
            within=3 * linger,
        )
        took, rounds_to_open = time.monotonic() - started, rounds
    assert took < linger / 2, took
    assert rounds_to_open <= 2 * CIRCUIT_OPEN_AFTER, rounds_to_open


def _paced(requests: list[RecordedRequest]) -> int:
    """How many requests, counted from the end, each came 0.9 s or more after the one before."""
    paced = 0
    for earlier, later in reversed(list(itertools.pairwise(requests))):
        if later.received_at - earlier.received_at < 0.9:
            break
        paced += 1
    return paced


async def test_turning_a_webhook_back_on_closes_its_circuit(env: Env) -> None:
    account, failing, _ = await hooks_with_events(env, 1)
    await set_circuit(
        env,
        failing,
        is_active=False,
        consecutive_failures=40,
        next_probe_at=utcnow() + timedelta(minutes=5),
    )
    async with env.db.begin() as conn:
        await update_webhook(conn, account, failing, {"is_active": True})
    row = await env.webhook_row(failing)
    assert (row.is_active, row.consecutive_failures, row.next_probe_at) == (True, 0, None)


@pytest.mark.parametrize("example", [None, ("contact.updated", {"id": "x"}, {"email": None})])
async def test_a_test_event_of_any_type_makes_the_probe_due_at_once(
    env: Env, example: tuple[str, dict[str, Any], dict[str, Any] | None] | None
) -> None:
    account, failing, _ = await hooks_with_events(env, 0)
    await set_circuit(
        env, failing, consecutive_failures=40, next_probe_at=utcnow() + timedelta(minutes=5)
    )
    async with env.db.begin() as conn:
        event_id = await insert_test_event(conn, account, failing, example)
    await manager.dispatch_events(env.db, now=utcnow())
    [probe] = await manager.claim_due(env.db, request())
    assert probe.webhook_id == failing  # the probe was 5 minutes away
    [delivery] = await env.deliveries(webhook_id=failing)
    assert delivery.event_id == event_id
