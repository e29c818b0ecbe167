"""The worker end to end: real databases, real aiohttp receivers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import sqlite3
import time
from datetime import timedelta
from typing import Any

import asyncpg
import orjson
import pytest
from prometheus_client import REGISTRY
from sqlalchemy import delete, update
from sqlalchemy.engine import make_url
from standardwebhooks import Webhook

from hookline import __version__
from hookline.delivery import manager
from hookline.delivery import wakeup as wakeup_module
from hookline.delivery import worker as worker_module
from hookline.delivery.wakeup import Wakeup, make_wakeup
from hookline.delivery.worker import Worker
from hookline.domain import contacts as contacts_domain
from hookline.domain import deliveries as deliveries_domain
from hookline.storage import connector, statements
from hookline.storage.db import Database
from hookline.storage.models import webhooks
from hookline.timeutil import utcnow
from tests.delivery.helpers import CONTACT, Env, new_secret
from tests.support.receiver import Receiver, Reply
from tests.support.waiting import eventually
from tests.support.wakeups import wake_ups

FAST_RETRIES = {"retry_schedule": "0.05,0.05"}
# The wake-up tests poll every 30 s: done well within a third of that means woken, not polled,
# with room for a loaded CI core (a 2 s bound failed under load though the wake-up worked).
WOKEN_WITHIN = 10.0


@pytest.fixture
def heard_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other processes tell a new PostgreSQL worker of their commits at once: no short poll
    after it registers (``Wakeup.unheard_seconds``), whose empty rounds a test that counts the
    scheduler's rounds would count."""
    monkeypatch.setattr(wakeup_module, "LOOK_SECONDS", 0.0)


async def test_delivers_a_signed_event_that_standardwebhooks_accepts(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        hook, secret = await env.webhook(account, receiver.url)
        await env.worker()
        event = await env.event(account)
        [request] = await receiver.wait_for(1)
        row = await env.delivery_where(lambda r: r.status == "succeeded")

    payload = Webhook(secret).verify(request.body, request.headers)
    assert payload["id"] == event and payload["type"] == "contact.created"
    assert payload["data"] == CONTACT and payload["timestamp"].endswith("Z")
    assert request.method == "POST" and request.path == "/hook"
    assert request.headers["webhook-id"] == event
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == f"hookline/{__version__}"
    assert abs(int(request.headers["webhook-timestamp"]) - time.time()) < 60
    assert (row.webhook_id, row.attempts, row.last_status_code) == (hook, 1, 204)
    [attempt] = await env.attempts(row.id)
    assert attempt.succeeded and attempt.status_code == 204


async def test_stored_headers_arrive_but_never_replace_ours(env: Env) -> None:
    """A webhook's stored headers come beside the signature and never replace hookline's
    content-type and user-agent, even if a row holds names the API refuses."""
    account = await env.account()
    stored = {"X-Tenant": "t1", "Content-Type": "text/plain", "USER-AGENT": "evil"}
    async with Receiver() as receiver:
        hook, secret = await env.webhook(account, receiver.url)
        async with env.db.begin() as conn:
            headers_enc = env.box.encrypt(orjson.dumps(stored).decode())
            await conn.execute(
                update(webhooks).where(webhooks.c.id == hook).values(headers_enc=headers_enc)
            )
        await env.worker()
        await env.event(account)
        await env.event(account)
        requests = await receiver.wait_for(2)

    for request in requests:
        Webhook(secret).verify(request.body, request.headers)
        assert request.headers["x-tenant"] == "t1"
        # Repeated headers would arrive joined with ", ".
        assert request.headers["content-type"] == "application/json"
        assert request.headers["user-agent"] == f"hookline/{__version__}"


async def test_contact_updated_carries_previous_attributes(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url, ["contact.updated"])
        await env.worker()
        await env.event(account, "contact.updated", previous_attributes={"first_name": "A"})
        [request] = await receiver.wait_for(1)
    assert request.json()["previous_attributes"] == {"first_name": "A"}


async def test_retries_after_a_500_then_succeeds(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([500])
        await env.webhook(account, receiver.url)
        await env.worker(**FAST_RETRIES)
        await env.event(account)
        first, second = await receiver.wait_for(2)
        row = await env.delivery_where(lambda r: r.status == "succeeded")

    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.body == second.body
    assert row.attempts == 2
    attempts = await env.attempts(row.id)
    assert [(a.status_code, a.succeeded) for a in attempts] == [(500, False), (204, True)]


async def test_gives_up_after_the_last_attempt(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.respond(503, body="down")
        await env.webhook(account, receiver.url)
        await env.worker(**FAST_RETRIES)
        await env.event(account)
        row = await env.delivery_where(lambda r: r.status == "failed")
        assert len(receiver.requests) == 3
    assert (row.attempts, row.last_status_code, row.next_attempt_at) == (3, 503, None)
    assert [a.response_body for a in await env.attempts(row.id)] == ["down"] * 3


def _final_outcomes() -> tuple[float, ...]:
    return tuple(
        REGISTRY.get_sample_value("hookline_deliveries_total", {"outcome": outcome}) or 0.0
        for outcome in ("succeeded", "failed", "pending")
    )


def _attempts_by_result() -> tuple[float, ...]:
    return tuple(
        REGISTRY.get_sample_value("hookline_delivery_attempts_total", {"result": result}) or 0.0
        for result in ("success", "failure")
    )


async def test_the_deliveries_metric_counts_each_final_state_once(env: Env) -> None:
    # Counted per batch by outcome: an attempt followed by a retry is no final state, and a
    # delivery that succeeded or failed for good counts once, under its own outcome. The
    # attempts metric counts every attempt once, by its result (also per recorded batch).
    before = _final_outcomes()
    attempts_before = _attempts_by_result()
    account = await env.account()
    async with Receiver() as healthy, Receiver() as failing:
        healthy.script([500])
        failing.respond(503)
        await env.webhook(account, healthy.url)
        await env.webhook(account, failing.url)
        worker = await env.worker(**FAST_RETRIES)
        for _ in range(2):
            await env.event(account)

        async def final() -> list[str]:
            return sorted(row.status for row in await env.deliveries())

        await eventually(final, lambda s: s == ["failed"] * 2 + ["succeeded"] * 2)
        await worker.stop()  # the recorder's last batch is counted before it returns
        assert (len(healthy.requests), len(failing.requests)) == (3, 6)
    counted = tuple(a - b for a, b in zip(_final_outcomes(), before, strict=True))
    assert counted == (2, 2, 0)
    attempts = tuple(a - b for a, b in zip(_attempts_by_result(), attempts_before, strict=True))
    assert attempts == (2, 1 + 6)  # the healthy endpoint's 500, the failing one's six


async def test_an_unexpected_error_in_an_attempt_is_recorded_as_a_retryable_failure(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bug while preparing an attempt must not strand its claim (the heartbeat would keep the
    # lease alive forever): the attempt is recorded as failed, and the retry goes out.
    account = await env.account()
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        worker = await env.worker(**FAST_RETRIES)
        body_of = worker._body
        calls: list[str] = []

        def broken_once(claim: manager.Claim) -> bytes:
            calls.append(claim.delivery_id)
            if len(calls) == 1:
                raise RuntimeError("a bug")
            return body_of(claim)

        monkeypatch.setattr(worker, "_body", broken_once)
        await env.event(account)
        row = await env.delivery_where(lambda r: r.status == "succeeded")
        assert len(receiver.requests) == 1
    attempts = await env.attempts(row.id)
    assert [(a.succeeded, a.status_code) for a in attempts] == [(False, None), (True, 204)]
    assert "RuntimeError('a bug')" in attempts[0].error


async def test_410_disables_the_webhook(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.respond(410)
        hook, _ = await env.webhook(account, receiver.url)
        await env.worker(**FAST_RETRIES)
        await env.event(account)
        row = await env.delivery_where(lambda r: r.status == "failed")
        webhook = await env.webhook_row(hook)
        assert len(receiver.requests) == 1
    assert row.attempts == 1 and row.last_status_code == 410
    assert not webhook.is_active and "410" in webhook.disabled_reason


async def test_redirects_are_failures_and_not_followed(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver, Receiver() as elsewhere:
        receiver.redirect(elsewhere.url)
        await env.webhook(account, receiver.url)
        await env.worker()
        await env.event(account)
        row = await env.delivery_where(lambda r: r.attempts == 1)
        assert elsewhere.requests == []
    assert row.status == "pending" and row.last_status_code == 302
    assert row.next_attempt_at > utcnow() + timedelta(seconds=30)  # the 60 s schedule


async def test_429_retry_after_pushes_the_retry_back(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.respond(429, headers={"Retry-After": "600"})
        await env.webhook(account, receiver.url)
        await env.worker(**FAST_RETRIES)
        await env.event(account)
        row = await env.delivery_where(lambda r: r.attempts == 1)
    assert row.status == "pending"
    assert row.next_attempt_at > utcnow() + timedelta(seconds=590)


async def test_a_slow_endpoint_times_out(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.hang(30)
        await env.webhook(account, receiver.url)
        await env.worker(delivery_total_timeout=0.5)
        await env.event(account)
        row = await env.delivery_where(lambda r: r.attempts == 1)
    [attempt] = await env.attempts(row.id)
    assert row.status == "pending" and row.last_status_code is None
    assert attempt.error.startswith("timeout") and not attempt.succeeded
    assert 400 <= attempt.duration_ms < 5000


async def test_connection_refused_is_a_retryable_failure(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        url = receiver.url
    # The receiver is closed: nothing listens on its port any more.
    await env.webhook(account, url)
    await env.worker()
    await env.event(account)
    row = await env.delivery_where(lambda r: r.attempts == 1)
    assert row.status == "pending" and row.last_error.startswith("connection failed")


async def test_inactive_webhooks_get_nothing(env: Env) -> None:
    account = await env.account()
    async with Receiver() as active, Receiver() as inactive:
        await env.webhook(account, inactive.url, is_active=False)
        hook, _ = await env.webhook(account, active.url)
        await env.worker()
        await env.event(account)
        await active.wait_for(1)
        assert inactive.requests == []
    assert [r.webhook_id for r in await env.deliveries()] == [hook]


async def test_test_event_reaches_an_unsubscribed_target(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        hook, secret = await env.webhook(account, receiver.url, ["call.completed"])
        await env.worker()
        async with env.db.begin() as conn:
            event = await deliveries_domain.insert_test_event(conn, account, hook)
        [request] = await receiver.wait_for(1)
    payload = Webhook(secret).verify(request.body, request.headers)
    assert payload["id"] == event and payload["type"] == "webhook.test"
    assert payload["data"]["webhook_id"] == hook


async def test_no_attempt_after_the_webhook_is_deleted(env: Env) -> None:
    """A delivery waiting for its retry when the webhook is deleted is never attempted again."""
    account = await env.account()
    async with Receiver() as doomed, Receiver() as sentinel:
        doomed.respond(500)
        hook, _ = await env.webhook(account, doomed.url, ["contact.created"])
        await env.webhook(account, sentinel.url, ["contact.deleted"])
        await env.worker(retry_schedule="0.3")
        await env.event(account)
        row = await env.delivery_where(lambda r: r.attempts == 1)
        async with env.db.begin() as conn:
            await conn.execute(delete(webhooks).where(webhooks.c.id == hook))
        # Once the retry would be due, a later event to another webhook is delivered: the
        # worker claimed after that moment, and claims go by due time.
        await eventually(_after(row.next_attempt_at), what="the retry's due time")
        await env.event(account, "contact.deleted")
        await sentinel.wait_for(1)
        assert len(doomed.requests) == 1
    assert await env.deliveries(webhook_id=hook) == []


def _after(moment: object):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return utcnow() > moment  # type: ignore[operator]

    return check


async def test_rotation_sends_two_signatures_that_both_verify(env: Env) -> None:
    account = await env.account()
    old = new_secret()
    async with Receiver() as receiver:
        _, new = await env.webhook(
            account,
            receiver.url,
            previous_secret=old,
            previous_expires_at=utcnow() + timedelta(hours=24),
        )
        await env.worker()
        await env.event(account)
        [request] = await receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    Webhook(new).verify(request.body, request.headers)
    Webhook(old).verify(request.body, request.headers)


async def test_an_expired_previous_secret_no_longer_signs(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        await env.webhook(
            account,
            receiver.url,
            previous_secret=new_secret(),
            previous_expires_at=utcnow() - timedelta(seconds=1),
        )
        await env.worker()
        await env.event(account)
        [request] = await receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split(" ")) == 1


async def test_a_hanging_endpoint_does_not_delay_a_healthy_one(env: Env) -> None:
    account = await env.account()
    async with Receiver() as hanging, Receiver() as healthy:
        hanging.hang(60)
        await env.webhook(account, hanging.url)
        await env.webhook(account, healthy.url)
        await env.worker(delivery_per_endpoint_concurrency=2, delivery_concurrency=8)
        started = time.monotonic()
        for _ in range(20):
            await env.event(account)
        requests = await healthy.wait_for(20, timeout=10)
        # All delivered while the hanging endpoint still holds its two slots.
        assert time.monotonic() - started < 5
        assert len(hanging.requests) == 2
        assert all(r.reply.delay == 60 for r in hanging.requests)
        assert max(r.received_at for r in requests) - started < 5


async def test_first_attempts_follow_event_order(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        event_ids = [await env.event(account) for _ in range(10)]
        await env.worker(delivery_per_endpoint_concurrency=1)
        requests = await receiver.wait_for(10)
    assert [r.headers["webhook-id"] for r in requests] == event_ids


async def test_a_crashed_workers_claim_is_resent_after_its_lease_expires(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([Reply(delay=60)])  # the first request hangs; the worker "dies" in it
        await env.webhook(account, receiver.url)
        lease = {"delivery_lease_seconds": 1.0, "delivery_total_timeout": 0.5}
        crashed = await env.worker(**lease)
        event = await env.event(account)
        await receiver.wait_for(1)
        await crashed.kill()
        [row] = await env.deliveries()
        assert row.leased_by == crashed.id and row.status == "pending"

        survivor = await env.worker(**lease)
        first, second = await receiver.wait_for(2)
        done = await env.delivery_where(lambda r: r.status == "succeeded")
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == event
    assert second.received_at - first.received_at >= 0.9  # not before the lease expired
    assert done.attempts == 1 and survivor.id != crashed.id


async def test_a_second_worker_on_the_database_is_noticed_by_both(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="hookline.delivery")
    quick = {"delivery_lease_seconds": 1.0, "delivery_total_timeout": 0.5}
    first = await env.worker(**quick)
    assert not [r for r in caplog.records if hasattr(r, "peer_worker_id")], "alone: no notice"
    second = await env.worker(**quick)

    def notices(by: Worker, of: Worker) -> list[logging.LogRecord]:
        return [
            r
            for r in caplog.records
            if getattr(r, "worker_id", None) == by.id
            and getattr(r, "peer_worker_id", None) == of.id
        ]

    async def first_noticed() -> list[logging.LogRecord]:
        return notices(first, second)

    [at_start] = notices(second, first)  # the newcomer sees the other at once
    [at_heartbeat] = await eventually(first_noticed, what="a notice at the next heartbeat")
    # Two servers on one SQLite file is usually a mistake; several on PostgreSQL, the design.
    level = logging.WARNING if env.db.is_sqlite else logging.INFO
    assert at_start.levelno == at_heartbeat.levelno == level
    assert "shares this database" in at_start.getMessage()
    assert first.id in at_start.getMessage()


async def test_graceful_stop_releases_unfinished_claims(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([Reply(delay=60)])
        await env.webhook(account, receiver.url)
        first = await env.worker(delivery_lease_seconds=300)
        await env.event(account)
        await receiver.wait_for(1)
        await first.stop(grace=0)
        [row] = await env.deliveries()
        assert row.leased_by is None and row.attempts == 0
        await env.worker(delivery_lease_seconds=300)
        await receiver.wait_for(2, timeout=5)  # at once, not after the 300 s lease
        await env.delivery_where(lambda r: r.status == "succeeded")


async def test_graceful_stop_records_sends_that_finish_in_time(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([Reply(delay=0.3)])
        await env.webhook(account, receiver.url)
        worker = await env.worker()
        await env.event(account)
        await receiver.wait_for(1)
        await worker.stop(grace=5)
        [row] = await env.deliveries()
    assert (row.status, row.attempts, row.leased_by) == ("succeeded", 1, None)


async def test_wakeup_starts_delivery_without_waiting_for_the_poll(env: Env) -> None:
    account = await env.account()
    wakeup = Wakeup()
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        worker = Worker(
            env.settings(delivery_poll_seconds=30), env.db, wakeup=wakeup, secret_box=env.box
        )
        env.workers.append(worker)
        await worker.start()
        await eventually(_idle(worker), what="the worker to go idle")
        started = time.monotonic()
        await env.event(account)
        wakeup.events_committed()
        await receiver.wait_for(1, timeout=WOKEN_WITHIN)
    assert time.monotonic() - started < WOKEN_WITHIN


async def test_a_worker_on_postgres_readies_connections_before_its_first_round(
    pg_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Worker.start`` readies the pool for the worker's statements once, before the
    scheduler's first round (otherwise a fresh server's first events waited for it)."""
    calls: list[str] = []
    ready, claim = manager.ready, manager.dispatch_and_claim

    async def readying(*args: Any, **kwargs: Any) -> None:
        calls.append("ready")
        await ready(*args, **kwargs)

    async def round_(*args: Any, **kwargs: Any) -> Any:
        calls.append("round")
        return await claim(*args, **kwargs)

    monkeypatch.setattr(manager, "ready", readying)
    monkeypatch.setattr(manager, "dispatch_and_claim", round_)

    async def rounds() -> int:
        return calls.count("round")

    worker = await pg_env.worker(delivery_poll_seconds=30)
    await eventually(rounds, lambda n: n >= 1, what="the scheduler's first round")
    worker.wakeup.events_committed()
    await eventually(rounds, lambda n: n >= 2, what="a second round")
    assert calls[0] == "ready" and calls.count("ready") == 1


async def test_a_worker_analyzes_young_delivery_tables_as_its_rounds_make_rows(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL the worker looks whether the delivery tables are young (and if so has them
    analyzed) once its rounds made ``YOUNG_ROWS`` deliveries, again at ``YOUNG_GROWTH`` times
    as many after a look that analyzed, and no more after one that did not; on SQLite one look,
    which analyzes nothing (its statements have no cached generic plans to mend), and no more."""
    monkeypatch.setattr(manager, "YOUNG_ROWS", 3)
    monkeypatch.setattr(manager, "YOUNG_GROWTH", 2)
    calls: list[bool | None] = []
    analyze = manager.analyze_young_tables

    async def counted(db: Any) -> bool:
        calls.append(None)  # called, whatever it then does
        done = calls[-1] = await analyze(db)
        return done

    async def looked() -> list[bool | None]:
        return list(calls)

    monkeypatch.setattr(manager, "analyze_young_tables", counted)
    account = await env.account()
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        await env.worker()
        for _ in range(2):
            await env.event(account)
        await receiver.wait_for(2)
        assert calls == []  # two rows: not yet
        await env.event(account)
        await receiver.wait_for(3)
        if env.db.is_sqlite:
            await eventually(looked, lambda seen: seen == [False], what="the one look")
            for _ in range(9):
                await env.event(account)
            await receiver.wait_for(12)
            assert calls == [False]
            return
        # Never analyzed: analyzed now.
        await eventually(looked, lambda seen: seen == [True], what="the first look")
        for _ in range(3):
            await env.event(account)
        await receiver.wait_for(6)
        # Six rows fit the pages the statistics know: nothing to do, and no look after this one.
        await eventually(looked, lambda seen: len(seen) == 2 and seen[1] is not None)
        assert calls == [True, False]
        for _ in range(6):
            await env.event(account)
        await receiver.wait_for(12)
    assert calls == [True, False]


async def test_an_outage_in_the_next_due_look_is_no_traceback(
    env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The look after a round sleeps one poll interval when it fails. An outage (here a pooled
    connection the server terminated) is the rounds' to report, once, without a traceback;
    anything else is a bug and keeps its traceback."""
    worker = Worker(env.settings(delivery_poll_seconds=7), env.db, secret_box=env.box)
    failure: Exception = asyncpg.ConnectionDoesNotExistError("terminated")

    async def failing(*args: Any) -> None:
        raise failure

    monkeypatch.setattr(manager, "next_due_at", failing)
    with caplog.at_level("WARNING", logger="hookline.delivery"):
        assert await worker._idle_timeout(utcnow()) == 7
        assert caplog.records == []
        failure = RuntimeError("a bug")
        assert await worker._idle_timeout(utcnow()) == 7
    assert [r.exc_info is not None for r in caplog.records] == [True]


class _ClaimRounds:
    """Counts the scheduler's claim rounds (its calls of ``manager.dispatch_and_claim``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        claim = manager.dispatch_and_claim

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await claim(*args, **kwargs)

        monkeypatch.setattr(manager, "dispatch_and_claim", counted)


async def test_a_delivery_at_a_trickle_costs_one_claim_round(
    env: Env, monkeypatch: pytest.MonkeyPatch, heard_at_once: None
) -> None:
    """Finished sends and recorded outcomes wake the scheduler only when that can change what
    it claims: each woke it for an empty dispatch + claim transaction (three rounds per event)."""
    account = await env.account()
    rounds = _ClaimRounds(monkeypatch)
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30)
        for sent in range(1, 5):
            if sent == 2:
                rounds.count = 0  # the first event let the start-up's own wake-ups pass
            await env.event(account)
            worker.wakeup.events_committed()
            await receiver.wait_for(sent, timeout=5)
            await eventually(_recorded(env, sent), what=f"{sent} recorded deliveries")
            await eventually(_idle(worker), what="the worker to go idle")
    assert rounds.count == 3


async def test_a_failing_endpoint_beside_a_healthy_one_costs_no_extra_round(
    env: Env, monkeypatch: pytest.MonkeyPatch, heard_at_once: None
) -> None:
    """Each event goes to both endpoints in one round. The failing endpoint's finished sends
    free slots nobody waits for, and its retries fall due long after the scheduler's next
    look: neither may wake the scheduler for a round of its own, which the healthy endpoint's
    next event would then wait behind (issue 19, isolation)."""
    account = await env.account()
    rounds = _ClaimRounds(monkeypatch)

    def attempted(count: int):  # type: ignore[no-untyped-def]
        async def check() -> bool:
            rows = await env.deliveries()
            return bool(sum(row.attempts for row in rows) >= 2 * count)

        return check

    async with Receiver() as failing, Receiver() as healthy:
        failing.respond(500)
        await env.webhook(account, failing.url)
        await env.webhook(account, healthy.url)
        worker = await env.worker(delivery_poll_seconds=30)
        for sent in range(1, 5):
            if sent == 2:
                rounds.count = 0  # the first event let the start-up's own wake-ups pass
            await env.event(account)
            worker.wakeup.events_committed()
            await healthy.wait_for(sent, timeout=5)
            await failing.wait_for(sent, timeout=5)
            await eventually(attempted(sent), what=f"{sent} attempts per endpoint recorded")
            await eventually(_idle(worker), what="the worker to go idle")
    assert rounds.count == 3


@pytest.mark.parametrize(
    "limit",
    [{"delivery_per_endpoint_concurrency": 2}, {"delivery_concurrency": 2}],
    ids=["endpoint-slots", "send-slots"],
)
async def test_a_backlog_drains_without_waiting_for_the_poll(
    env: Env, monkeypatch: pytest.MonkeyPatch, limit: dict[str, int]
) -> None:
    """A claim takes at most the free slots (an endpoint's, or all send slots) as the round
    began. When sends finish while it runs, the claim was capped although slots are free again:
    another round must follow at once, not at the next poll."""
    account = await env.account()
    workers: list[Worker] = []
    claim = manager.dispatch_and_claim

    async def claim_while_sends_finish(db: Any, request: Any, **kwargs: Any) -> Any:
        if request.busy:
            await eventually(_idle(workers[0]), what="the in-flight sends to finish")
        return await claim(db, request, **kwargs)

    monkeypatch.setattr(manager, "dispatch_and_claim", claim_while_sends_finish)
    async with Receiver() as receiver:
        receiver.script([Reply(), Reply(delay=0.2)] * 6)  # one of each pair still in flight
        await env.webhook(account, receiver.url)
        for _ in range(12):
            await env.event(account)
        workers.append(await env.worker(delivery_poll_seconds=30, **limit))
        workers[0].wakeup.events_committed()
        await receiver.wait_for(12, timeout=10)


async def test_a_retry_due_before_the_next_poll_wakes_the_scheduler(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([500])
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30, **FAST_RETRIES)
        await eventually(_idle(worker), what="the worker to go idle")
        started = time.monotonic()
        await env.event(account)
        worker.wakeup.events_committed()
        await receiver.wait_for(2, timeout=WOKEN_WITHIN)
    assert time.monotonic() - started < WOKEN_WITHIN


async def test_a_retry_falling_due_between_the_claim_and_the_next_due_look_is_not_skipped(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look at the next due time ran with a fresh "now": a retry that fell due after the
    round's claim but before that look was neither claimed nor seen, and the scheduler slept a
    whole poll interval (CI, under load). Here the first attempt's outcome is recorded (and
    wakes the scheduler) before its round's look, and the next round's claim, which finds
    nothing yet, is slower than the retry delay."""
    account = await env.account()
    claim, next_due_at = manager.dispatch_and_claim, manager.next_due_at
    sent: list[bool] = []

    async def first_attempt_recorded() -> Any:
        return [row for row in await env.deliveries() if row.attempts >= 1]

    async def claim_then_stall(db: Any, request: Any, **kwargs: Any) -> Any:
        dispatched, claims = await claim(db, request, **kwargs)
        sent.extend(True for _ in claims)
        if not claims and sent:
            await asyncio.sleep(0.5)  # models a slow round trip: longer than the retry delay
        return dispatched, claims

    async def look_once_recorded(db: Any, now: Any) -> Any:
        if len(sent) == 1:  # the first send's round: its outcome is recorded meanwhile
            await eventually(first_attempt_recorded, what="the first attempt's outcome")
        return await next_due_at(db, now)

    monkeypatch.setattr(manager, "dispatch_and_claim", claim_then_stall)
    monkeypatch.setattr(manager, "next_due_at", look_once_recorded)
    async with Receiver() as receiver:
        receiver.script([500])
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30, retry_schedule="0.3,0.3")
        await eventually(_idle(worker), what="the worker to go idle")
        await env.event(account)
        worker.wakeup.events_committed()
        await receiver.wait_for(2, timeout=WOKEN_WITHIN)


async def test_a_slot_freed_on_a_saturated_endpoint_wakes_the_scheduler(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.respond(204, delay=0.2)  # the first send finishes while the scheduler sleeps
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30, delivery_per_endpoint_concurrency=1)
        await eventually(_idle(worker), what="the worker to go idle")
        started = time.monotonic()
        await env.event(account)
        await env.event(account)
        worker.wakeup.events_committed()
        await receiver.wait_for(2, timeout=WOKEN_WITHIN)
    assert time.monotonic() - started < WOKEN_WITHIN


async def test_with_every_slot_taken_one_freed_slot_does_not_start_a_claim(
    env: Env, heard_at_once: None
) -> None:
    """All 16 send slots taken: a claim waits until an eighth of them (2) are free, not for the
    first send to finish (a claim round for one slot cost as much as one for many). So the
    17th event goes out only once a slow send finishes, never with the one fast reply."""
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([Reply(), *[Reply(delay=0.5)] * 15])
        await env.webhook(account, receiver.url)
        for _ in range(17):
            await env.event(account)
        started = time.monotonic()
        worker = await env.worker(
            delivery_poll_seconds=30,
            delivery_concurrency=16,
            delivery_per_endpoint_concurrency=16,
        )
        worker.wakeup.events_committed()
        await receiver.wait_for(17, timeout=WOKEN_WITHIN)
    last = max(request.received_at for request in receiver.requests)
    assert last - started >= 0.45


async def test_a_round_without_new_events_only_claims(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A round woken by a finished send skips the fan-out: on PostgreSQL an empty one was two
    round trips of the round's four."""
    account = await env.account()
    rounds: list[tuple[bool, int]] = []
    claim = manager.dispatch_and_claim

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        result = await claim(*args, **kwargs)
        rounds.append((kwargs["dispatch"], len(result[1])))
        return result

    monkeypatch.setattr(manager, "dispatch_and_claim", recorded)
    async with Receiver() as receiver:
        receiver.respond(204, delay=0.2)
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30, delivery_per_endpoint_concurrency=1)

        async def started() -> bool:
            return bool(rounds)

        await eventually(started, what="the start-up round")
        rounds.clear()
        await env.event(account)
        await env.event(account)
        worker.wakeup.events_committed()
        await receiver.wait_for(2, timeout=WOKEN_WITHIN)
    # The wake-up's round fanned both out and claimed one (one slot); the round woken when
    # that send finished claimed the other without a fan-out. (Start-up may add empty rounds.)
    assert [(dispatch, n) for dispatch, n in rounds if n] == [(True, 1), (False, 1)]


async def test_a_round_woken_while_it_ran_is_followed_by_the_next_without_a_look(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under load every round is woken while it runs (events keep coming), so the look at the
    next due time that followed each round was read for nothing: on PostgreSQL two round trips
    of every cycle, which each new event waited for. A woken round goes straight to the next;
    only a round that nothing woke looks before it sleeps."""
    account = await env.account()
    calls: list[str] = []
    claim, next_due_at = manager.dispatch_and_claim, manager.next_due_at
    woken_once = False

    async def claim_woken_once(db: Any, request: Any, **kwargs: Any) -> Any:
        nonlocal woken_once
        result = await claim(db, request, **kwargs)
        calls.append(f"round {len(result[1])}")
        if result[1] and not woken_once:
            woken_once = True  # an event committed while this round ran
            await env.event(account)
            worker.wakeup.events_committed()
        return result

    async def counted_look(db: Any, now: Any) -> Any:
        calls.append("look")
        return await next_due_at(db, now)

    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30)
        await eventually(_idle(worker), what="the worker to go idle")
        monkeypatch.setattr(manager, "dispatch_and_claim", claim_woken_once)
        monkeypatch.setattr(manager, "next_due_at", counted_look)
        await asyncio.sleep(0)
        calls.clear()
        await env.event(account)
        worker.wakeup.events_committed()
        await receiver.wait_for(2, timeout=WOKEN_WITHIN)
        await eventually(_recorded(env, 2), what="both deliveries recorded")

        async def looked() -> bool:
            return "look" in calls

        await eventually(looked, what="the last round's look before sleeping")
    # The round that claimed the first event was woken by the second: the next round followed
    # with no look between them; that one, not woken, looked before sleeping.
    # (A look of the start-up's last round may come first, and empty rounds anywhere.)
    rounds = [call for call in calls if call != "round 0"]
    first = rounds.index("round 1")
    assert rounds[first : first + 3] == ["round 1", "round 1", "look"]


async def test_events_committed_without_a_wake_up_fan_out_within_a_poll_while_busy(
    env: Env,
) -> None:
    """The poll is the safety net for a lost wake-up even when the worker never goes idle:
    rounds woken by finished sends alone would never fan the silent event out."""
    busy_account, quiet_account = await env.account(), await env.account()
    async with Receiver() as slow, Receiver() as fast:
        slow.respond(204, delay=0.1)
        await env.webhook(busy_account, slow.url)
        await env.webhook(quiet_account, fast.url)
        for _ in range(40):  # one at a time: ~4 s of rounds woken by finished sends
            await env.event(busy_account)
        worker = await env.worker(delivery_poll_seconds=0.5, delivery_per_endpoint_concurrency=1)
        worker.wakeup.events_committed()
        await slow.wait_for(2, timeout=WOKEN_WITHIN)
        started = time.monotonic()
        await env.event(quiet_account)  # committed by "another process": no wake-up
        await fast.wait_for(1, timeout=WOKEN_WITHIN)
        assert time.monotonic() - started < WOKEN_WITHIN
        assert len(slow.requests) < 40, "the busy endpoint's backlog kept the worker busy"


def _recorded(env: Env, count: int):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return bool(sum(row.status == "succeeded" for row in await env.deliveries()) >= count)

    return check


def _idle(worker: Worker):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return worker.in_flight == 0

    return check


class _Recordings:
    """The batch sizes the recorder stores (its calls of ``manager.record_outcomes``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[int] = []
        record = manager.record_outcomes

        async def counted(db: Any, worker_id: str, records: Any, **kwargs: Any) -> Any:
            self.batches.append(len(records))
            return await record(db, worker_id, records, **kwargs)

        monkeypatch.setattr(manager, "record_outcomes", counted)


async def _sent_and_recorded(env: Env, replies: list[Reply], **settings: Any) -> None:
    """One event per reply to one webhook, all claimed by the worker's first round; returns
    once every delivery is received and recorded as succeeded."""
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script(replies)
        await env.webhook(account, receiver.url)
        for _ in replies:
            await env.event(account)
        worker = await env.worker(delivery_poll_seconds=30, **settings)
        worker.wakeup.events_committed()
        await receiver.wait_for(len(replies), timeout=10)
        await eventually(_recorded(env, len(replies)), what="every delivery recorded")


async def test_a_full_batch_of_outcomes_is_stored_at_once(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorder waits for a batch to fill (or its linger to pass), so a drain stores its
    outcomes in a few transactions, not one per handful; a full batch does not wait."""
    monkeypatch.setattr(worker_module, "RECORD_BATCH", 4)
    monkeypatch.setattr(worker_module, "RECORD_LINGER_SECONDS", 60.0)
    monkeypatch.setattr(worker_module, "RECORD_LINGER_LIGHT_SECONDS", 60.0)
    recordings = _Recordings(monkeypatch)
    await _sent_and_recorded(env, [Reply(delay=0.05 * n) for n in range(4)])  # one by one
    assert recordings.batches == [4]


# Between the two outcomes of the linger tests: far over the 5 ms linger, well under the light one.
_GAP = 0.2


async def test_outcomes_finishing_a_light_loads_gap_apart_are_stored_together(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a light load (a delivery every few milliseconds) the SQLite recorder still batches:
    each batch is a write transaction that the next event's commit and dispatch round wait
    behind on the one writer. Two outcomes 200 ms apart, with 1 send of 64 slots in flight when
    the first finishes, are one batch there (a 5 ms linger stored them one by one). On
    PostgreSQL, with no shared writer, the longer linger slowed drains: 5 ms, two batches."""
    # The gap 0.2 s and the light linger 0.6 s, not 20 and 50 ms: a loaded host's stall must
    # neither split the SQLite batch nor join PostgreSQL's two (it once did, at 20 ms).
    monkeypatch.setattr(worker_module, "RECORD_LINGER_LIGHT_SECONDS", 0.6)
    recordings = _Recordings(monkeypatch)
    await _sent_and_recorded(env, [Reply(), Reply(delay=_GAP)])
    assert recordings.batches == ([2] if env.db.is_sqlite else [1, 1])


async def test_outcomes_under_load_are_stored_without_the_light_loads_linger(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a quarter of the send slots or more in flight (here 1 of 4) the recorder does not
    wait the light load's linger: in a drain a batch fills in milliseconds anyway, and a longer
    wait made the batches larger and the drain slower. The same two outcomes 200 ms apart are
    two batches (the light linger at every load would store them as one)."""
    monkeypatch.setattr(worker_module, "RECORD_LINGER_LIGHT_SECONDS", 0.6)  # would join them
    recordings = _Recordings(monkeypatch)
    await _sent_and_recorded(env, [Reply(), Reply(delay=_GAP)], delivery_concurrency=4)
    assert recordings.batches == [1, 1]


async def test_stopping_stores_the_outcomes_a_batch_was_waiting_with(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "RECORD_LINGER_SECONDS", 60.0)
    monkeypatch.setattr(worker_module, "RECORD_LINGER_LIGHT_SECONDS", 60.0)
    account = await env.account()
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        await env.event(account)
        worker = await env.worker(delivery_poll_seconds=30)
        worker.wakeup.events_committed()
        await receiver.wait_for(1, timeout=10)
        await eventually(_idle(worker), what="the send to finish")
        started = time.monotonic()
        await worker.stop()
    assert time.monotonic() - started < 10  # not the linger
    assert [row.status for row in await env.deliveries()] == ["succeeded"]


async def test_a_stop_during_the_backoff_after_a_failed_round_stops_at_once(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A round that fails (the database down or restarting) backs off; a SIGTERM then was
    # forgotten and the scheduler went on until the process was killed (seen after outages).
    monkeypatch.setattr(worker_module, "ERROR_BACKOFF_SECONDS", 60.0)
    failed = asyncio.Event()
    real_round = manager.dispatch_and_claim

    async def fails_once(*args: Any, **kwargs: Any) -> Any:
        if not failed.is_set():
            failed.set()
            raise ConnectionRefusedError("the database is restarting")
        return await real_round(*args, **kwargs)

    monkeypatch.setattr(manager, "dispatch_and_claim", fails_once)
    worker = await env.worker(delivery_poll_seconds=30)
    worker.wakeup.events_committed()
    await asyncio.wait_for(failed.wait(), timeout=10)
    started = time.monotonic()
    await asyncio.wait_for(worker.stop(), timeout=20)  # not the 30 s poll, nor the backoff
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("status", [400, 404, 500])
async def test_other_errors_are_retried(env: Env, status: int) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([status])
        await env.webhook(account, receiver.url)
        await env.worker(**FAST_RETRIES)
        await env.event(account)
        await receiver.wait_for(2)
        await env.delivery_where(lambda r: r.status == "succeeded")


async def test_manual_retry_sends_a_failed_delivery_again(env: Env) -> None:
    account = await env.account()
    async with Receiver() as receiver:
        receiver.script([500])
        hook, _ = await env.webhook(account, receiver.url)
        worker = await env.worker(retry_schedule="0")  # two attempts at most
        receiver.script([500, 500])
        await env.event(account)
        row = await env.delivery_where(lambda r: r.status == "failed")
        async with env.db.begin() as conn:
            await deliveries_domain.retry_delivery(conn, account, hook, row.id, now=utcnow())
        worker.wakeup.events_committed()
        await receiver.wait_for(3)
        done = await env.delivery_where(lambda r: r.status == "succeeded")
    assert done.attempts == 3


async def test_postgres_notify_wakes_a_worker_in_another_process(pg_env: Env) -> None:
    env = pg_env
    account = await env.account()
    api_side = make_wakeup(env.settings(), env.db)  # what another (API) process holds
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30)
        await eventually(_listening(worker), what="the worker to LISTEN")
        await eventually(_idle(worker), what="the worker to go idle")
        started = time.monotonic()
        await env.event(account)
        api_side.events_committed()
        await receiver.wait_for(1, timeout=WOKEN_WITHIN)
    await api_side.close()
    assert time.monotonic() - started < WOKEN_WITHIN


async def test_a_worker_registered_after_another_processs_look_hears_of_its_commits_at_once(
    pg_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API process looked at the workers before this one registered, so its commits send no
    NOTIFY until it looks again (``LOOK_SECONDS``, made a minute here): the new worker's short
    poll meanwhile delivers them in milliseconds, where its 30 s poll would not in time."""
    monkeypatch.setattr(wakeup_module, "LOOK_SECONDS", 60.0)
    env = pg_env
    account = await env.account()
    api_side = make_wakeup(env.settings(), env.db)  # env.db is the API process's
    worker_db = Database(env.settings())  # the worker's process: its own connections
    worker = Worker(env.settings(delivery_poll_seconds=30), worker_db, secret_box=env.box)
    try:
        async with Receiver() as receiver:
            await env.webhook(account, receiver.url)
            api_side.events_committed()  # its look: no worker anywhere
            await eventually(_looked(api_side), what="the API side's look")
            await worker.start()
            await eventually(_asleep(worker), what="the worker's first round to end")
            await env.event(account)  # wakes api_side alone, which sends no NOTIFY
            await receiver.wait_for(1, timeout=WOKEN_WITHIN)
    finally:
        await worker.stop(grace=0)
        await api_side.close()
        await worker_db.dispose()


def _looked(wakeup: Wakeup):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return bool(wakeup._looked_at > -math.inf)  # type: ignore[attr-defined]

    return check


async def test_a_worker_ignores_its_own_process_notify(pg_env: Env) -> None:
    """Its own process's events woke it locally already; the NOTIFY would cost an empty round."""
    worker = await pg_env.worker(delivery_poll_seconds=30)
    await eventually(_idle(worker), what="the worker to go idle")
    wake = worker._wake
    wake.clear()
    worker.on_notify(worker.wakeup.origin)
    assert not wake.is_set()
    worker.on_notify("another-process")
    assert wake.is_set()


def _listening(worker: Worker):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return worker.listening

    return check


class _Commits:
    """Counts SQLite's group-commit COMMITs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        commit = connector._Batch.commit

        async def counted(batch: connector._Batch) -> None:
            self.count += 1
            await commit(batch)

        monkeypatch.setattr(connector._Batch, "commit", counted)


def _asleep(worker: Worker):  # type: ignore[no-untyped-def]
    async def check() -> bool:
        return worker.in_flight == 0 and worker.wakeup.scheduler_asleep()

    return check


async def test_on_sqlite_an_event_shares_its_commit_with_the_round_it_wakes(
    sqlite_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of an event committed while the scheduler sleeps wake it before their COMMIT, and
    its round runs in their batch: when ``commit_rows`` returns, the event is fanned out and
    its delivery claimed, in that one COMMIT (one fsync'd COMMIT per event where there were
    two, the event's and then its round's). Nobody is woken again after it: a second wake-up
    would cost the scheduler an empty round per event."""
    env = sqlite_env
    account = await env.account()
    path = make_url(env.db.url).database
    assert path is not None
    rounds, commits = _ClaimRounds(monkeypatch), _Commits(monkeypatch)
    async with Receiver() as receiver:
        await env.webhook(account, receiver.url)
        worker = await env.worker(delivery_poll_seconds=30)
        for sent in range(1, 4):
            await eventually(_asleep(worker), what="the scheduler to sleep")
            rounds.count = commits.count = 0
            _contact, joint = contacts_domain.contact_creation(
                account, {"first_name": f"Ada {sent}", "phone_number": "+15551234567"}
            )
            with wake_ups(env.db) as woken:
                await env.db.commit_rows(joint)
                with contextlib.closing(sqlite3.connect(path)) as raw:  # no turn of the loop
                    claimed = raw.execute(
                        "SELECT leased_by FROM deliveries WHERE event_id = ?",
                        (joint.rows[1]["id"],),
                    ).fetchall()
            assert claimed == [(worker.id,)]
            assert (commits.count, rounds.count, len(woken)) == (1, 1, 1)
            await receiver.wait_for(sent, timeout=5)
            await eventually(_recorded(env, sent), what=f"{sent} recorded deliveries")
            await eventually(_asleep(worker), what="the scheduler to sleep")
            assert rounds.count == 1  # no round after the event's


async def test_on_sqlite_a_started_worker_compiles_nothing_beside_a_hanging_and_a_failing_endpoint(
    sqlite_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite worker compiles its statements when it starts (``manager.ready_statements_on_
    sqlite``): compiled on their first runs instead, they held up a fresh server's first
    events, most of all beside bad endpoints, whose first rounds meet several shapes of the
    claim. Every statement the worker's tasks ask for here, beside a hanging,
    a failing and a healthy endpoint, was compiled by its start."""
    env = sqlite_env
    in_worker: contextvars.ContextVar[bool] = contextvars.ContextVar("in_worker", default=False)
    # The statements asked for since the test began, as a fresh process would have compiled
    # them (the module's Querys keep what earlier tests in this process compiled), and those
    # the worker's tasks asked for first after its start: compiled on their path.
    seen: set[int] = set()
    asked: list[statements.Query] = []
    first_asked: list[statements.Query] = []
    compiled = statements.Query.compiled

    def noted(query: statements.Query, dialect: Any) -> Any:
        if in_worker.get():
            asked.append(query)
            if id(query) not in seen:
                first_asked.append(query)
        seen.add(id(query))
        return compiled(query, dialect)

    monkeypatch.setattr(statements.Query, "compiled", noted)
    account = await env.account()
    async with Receiver() as failing, Receiver() as hanging, Receiver() as healthy:
        failing.respond(500)
        hanging.hang(30)
        for receiver in (failing, hanging, healthy):
            await env.webhook(account, receiver.url)
        for _ in range(4):
            await env.event(account)
        token = in_worker.set(True)  # the worker's tasks, created by its start, inherit it
        worker = await env.worker(delivery_per_endpoint_concurrency=2, delivery_poll_seconds=30)
        in_worker.reset(token)
        asked.clear()  # the start's own statements (registering, looking for peers, readying)
        first_asked.clear()
        for sent in range(5, 9):
            await env.event(account)
            worker.wakeup.events_committed()
            await healthy.wait_for(sent, timeout=5)
        await eventually(_recorded(env, 8), what="the healthy deliveries recorded")
    assert asked  # the worker's rounds and recorder ran statements
    assert first_asked == [], [str(query.statement)[:80] for query in first_asked]
