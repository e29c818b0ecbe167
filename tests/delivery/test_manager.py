"""The delivery engine (manager.py, its statements in storage/queries/deliveries.py) against real
migrated databases, SQLite and PostgreSQL: every claim test runs on both forms of the claim."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from sqlalchemy import delete, func, select, text, update

from hookline.delivery import manager, stats
from hookline.delivery.manager import AttemptRecord, ClaimMemo, ClaimRequest
from hookline.delivery.retry import CIRCUIT_OPEN_AFTER, ConnectFailed, Decision
from hookline.delivery.sender import AttemptResult
from hookline.delivery.signing import event_body
from hookline.domain import deliveries as deliveries_domain
from hookline.storage.connector import PostgresConnection
from hookline.storage.db import READY_CONNECTIONS, fetch_all
from hookline.storage.models import attempt_rollups, deliveries, events, webhooks, workers
from hookline.storage.outbox import record_event
from hookline.storage.queries import deliveries as queries
from hookline.storage.queries.workers import NOTIFY
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env, ago
from tests.support.postgres import client_backends, others_last_statements, unanalyzed_tables
from tests.support.waiting import eventually

URL = "http://127.0.0.1:9/hook"
DAY = timedelta(days=1)


def request(
    worker: str = "w1",
    limit: int = 100,
    per_endpoint: int = 100,
    busy: dict[str, int] | None = None,
) -> ClaimRequest:
    return ClaimRequest(
        worker_id=worker,
        now=utcnow(),
        lease_seconds=30,
        limit=limit,
        per_endpoint=per_endpoint,
        busy=busy or {},
    )


def record(claim: manager.Claim, status: int | None, decision: Decision) -> AttemptRecord:
    next_at = utcnow() + timedelta(seconds=decision.delay) if decision.delay is not None else None
    return AttemptRecord(
        delivery_id=claim.delivery_id,
        webhook_id=claim.webhook_id,
        result=AttemptResult(
            started_at=utcnow(), duration_ms=12, status_code=status, response_body="ok"
        ),
        decision=decision,
        next_attempt_at=next_at,
    )


def count_transactions(env: Env, monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """A list that grows by one for each transaction ``env.db.begin()`` opens from now on."""
    opened: list[None] = []
    begin = env.db.begin

    def counted_begin() -> Any:
        opened.append(None)
        return begin()

    monkeypatch.setattr(env.db, "begin", counted_begin)
    return opened


async def test_dispatch_fans_out_to_active_subscribed_webhooks_only(env: Env) -> None:
    account, other = await env.account(), await env.account()
    a, _ = await env.webhook(account, URL, ["contact.created", "contact.updated"])
    b, _ = await env.webhook(account, URL, ["contact.created"])
    await env.webhook(account, URL, ["call.started"])  # not subscribed
    await env.webhook(account, URL, ["contact.created"], is_active=False)
    await env.webhook(other, URL, ["contact.created"])  # another account
    event = await env.event(account)

    result = await manager.dispatch_events(env.db, now=utcnow())

    assert (result.events, result.deliveries) == (1, 2)
    rows = await env.deliveries(event_id=event)
    assert sorted(r.webhook_id for r in rows) == sorted([a, b])
    assert {(r.status, r.attempts, r.event_type) for r in rows} == {
        ("pending", 0, "contact.created")
    }
    again = await manager.dispatch_events(env.db, now=utcnow())
    assert (again.events, again.deliveries) == (0, 0)


async def test_test_event_goes_to_its_target_alone(env: Env) -> None:
    account = await env.account()
    target, _ = await env.webhook(account, URL, ["call.started"])
    await env.webhook(account, URL, ["contact.created", "call.started"])
    async with env.db.begin() as conn:
        event = await deliveries_domain.insert_test_event(conn, account, target)
    await manager.dispatch_events(env.db, now=utcnow())
    rows = await env.deliveries(event_id=event)
    assert [(r.webhook_id, r.event_type) for r in rows] == [(target, "webhook.test")]


async def test_dispatch_works_through_a_backlog_in_batches(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    for _ in range(7):
        await env.event(account)
    first = await manager.dispatch_events(env.db, now=utcnow(), batch_size=5)
    second = await manager.dispatch_events(env.db, now=utcnow(), batch_size=5)
    assert (first.events, second.events) == (5, 2)
    assert len(await env.deliveries()) == 7


async def test_dispatch_and_claim_sends_a_new_event_after_one_transaction(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    event = await env.event(account)
    opened = count_transactions(env, monkeypatch)

    dispatched, claims = await manager.dispatch_and_claim(env.db, request(worker="w1"))

    assert len(opened) == 1  # fan-out and claim share one transaction: one COMMIT
    assert (dispatched.events, dispatched.deliveries) == (1, 1)
    assert [(c.event_id, c.webhook_id) for c in claims] == [(event, hook)]
    [row] = await env.deliveries(event_id=event)
    assert row.leased_by == "w1"


async def test_dispatch_and_claim_fans_out_even_with_no_free_slot(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    event = await env.event(account)

    dispatched, claims = await manager.dispatch_and_claim(env.db, request(limit=0))

    assert (dispatched.events, claims) == (1, [])
    [row] = await env.deliveries(event_id=event)
    assert (row.status, row.leased_by) == ("pending", None)


async def test_claims_follow_event_order_and_carry_the_payload(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    event_ids = [await env.event(account, data={"n": n}) for n in range(5)]
    await manager.dispatch_events(env.db, now=utcnow())

    claims = await manager.claim_due(env.db, request())

    assert [c.event_id for c in claims] == event_ids
    # On SQLite the data comes as stored (an orjson.Fragment), on PostgreSQL decoded.
    assert [orjson.loads(orjson.dumps(c.data)) for c in claims] == [{"n": n} for n in range(5)]
    assert {(c.webhook_id, c.url, c.attempts) for c in claims} == {(hook, URL, 0)}
    rows = await env.deliveries()
    assert {r.leased_by for r in rows} == {"w1"}
    # Leased rows are not claimed twice.
    assert await manager.claim_due(env.db, request("w2")) == []


# Payloads whose text a serializer could spell differently: escapes, every plane of unicode,
# integers at 64 bits' ends, floats at theirs, nesting, keys in no sorted order.
TRICKY_DATA: dict[str, Any] = {
    "zeta": 'quote " backslash \\ slash / tab \t newline \n nul-free \u0001 \u001f \u007f',
    "unicode": "Åd\u0430 漢字 😀 \u2028\u2029 \ufeff é",  # \u0430: Cyrillic a
    "big": [2**63 - 1, -(2**63), 2**64 - 1, 0, -0.0, 1e16, 1.5e-323, 0.1, 1.7976931348623157e308],
    "nested": {"b": [{"c": None, "a": True}], "a": False, "": ""},
    "alpha": [],
}


@pytest.mark.parametrize("previous", [None, {}, {"first_name": 'Ä"\\', "n": 2**63 - 1}])
async def test_a_claims_body_is_the_decoded_and_encoded_one(
    env: Env, previous: dict[str, Any] | None
) -> None:
    """The body built from a claim (the event's stored JSON on SQLite, decoded on PostgreSQL)
    is byte for byte the body of the decoded data encoded again."""
    account = await env.account()
    await env.webhook(account, URL, ["contact.updated", "contact.created"])
    async with env.db.begin() as conn:
        updated = await record_event(conn, account, "contact.updated", TRICKY_DATA, previous)
        created = await record_event(conn, account, "contact.created", TRICKY_DATA, previous)
    await manager.dispatch_events(env.db, now=utcnow())

    claims = await manager.claim_due(env.db, request())

    assert [c.event_id for c in claims] == [updated, created]
    async with env.db.read() as conn:  # decoded, as the stream and the filters read them
        rows = await fetch_all(conn, queries.EVENT_BODIES, {"ids": [updated, created]})
    decoded = {row.id: row for row in rows}
    for claim in claims:
        sent = event_body(
            claim.event_id,
            claim.event_type,
            claim.event_created_at,
            claim.data,
            claim.previous_attributes,
        )
        row = decoded[claim.event_id]
        expected = event_body(row.id, row.type, row.created_at, row.data, row.previous_attributes)
        assert sent == expected
        assert orjson.loads(sent)["data"] == TRICKY_DATA
    assert b'"previous_attributes"' not in sent  # contact.created carries none


async def test_claim_respects_global_and_per_endpoint_limits(env: Env) -> None:
    account = await env.account()
    slow, _ = await env.webhook(account, URL)
    fast, _ = await env.webhook(account, URL)
    for _ in range(20):
        await env.event(account)  # each goes to both webhooks
    await manager.dispatch_events(env.db, now=utcnow())

    claims = await manager.claim_due(env.db, request(limit=5, per_endpoint=2))
    assert len(claims) == 4
    assert sorted(c.webhook_id for c in claims) == sorted([slow, slow, fast, fast])

    # The slow endpoint has both slots busy, the fast one one: only one more (for fast).
    more = await manager.claim_due(
        env.db, request(limit=10, per_endpoint=2, busy={slow: 2, fast: 1})
    )
    assert [c.webhook_id for c in more] == [fast]


async def test_the_global_limit_takes_the_longest_waiting_deliveries_in_due_order(
    env: Env,
) -> None:
    account = await env.account()
    hooks = [(await env.webhook(account, URL))[0] for _ in range(4)]
    for _ in range(2):
        await env.event(account)  # each goes to all four webhooks
    await manager.dispatch_events(env.db, now=utcnow())
    # Due times against the grain of the ids: the last webhook has waited longest, and each
    # webhook's second delivery is due before its first. Seconds ago, by webhook:
    # 0: 40, 50; 1: 60, 70; 2: 80, 90; 3: 100, 110.
    rows = await env.deliveries()
    by_hook = {hook: sorted(r.id for r in rows if r.webhook_id == hook) for hook in hooks}
    for rank, hook in enumerate(hooks):
        first, second = by_hook[hook]
        await env.set_delivery(first, next_attempt_at=ago(40 + 20 * rank))
        await env.set_delivery(second, next_attempt_at=ago(50 + 20 * rank))

    claims = await manager.claim_due(env.db, request(limit=3, per_endpoint=10))

    last, before_last = by_hook[hooks[3]], by_hook[hooks[2]]
    expected = [last[1], last[0], before_last[1]]  # due 110, 100 and 90 s ago
    assert [c.delivery_id for c in claims] == expected
    leased = {r.id for r in await env.deliveries() if r.leased_by == "w1"}
    assert leased == set(expected)


async def test_a_saturated_endpoint_does_not_starve_others(env: Env) -> None:
    account = await env.account()
    hog, _ = await env.webhook(account, URL)
    for _ in range(300):
        await env.event(account)
    await manager.dispatch_events(env.db, now=ago(1))
    other, _ = await env.webhook(account, URL)
    last = await env.event(account)  # the only one for `other`, behind 300 of the hog's
    await manager.dispatch_events(env.db, now=utcnow())

    claims = await manager.claim_due(env.db, request(limit=4, per_endpoint=8, busy={hog: 8}))
    assert [(c.webhook_id, c.event_id) for c in claims] == [(other, last)]


async def test_inactive_and_deleted_webhooks_deliveries_are_never_claimed(env: Env) -> None:
    account = await env.account()
    paused, _ = await env.webhook(account, URL)
    deleted, _ = await env.webhook(account, URL)
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    async with env.db.begin() as conn:
        await conn.execute(webhooks.update().where(webhooks.c.id == paused).values(is_active=False))
        await conn.execute(delete(webhooks).where(webhooks.c.id == deleted))
    assert await manager.claim_due(env.db, request()) == []
    assert [r.webhook_id for r in await env.deliveries()] == [paused]  # deleted cascaded


async def test_future_and_finished_deliveries_are_not_claimed(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    for _ in range(2):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    first, second = await env.deliveries()
    await env.set_delivery(first.id, next_attempt_at=utcnow() + timedelta(minutes=5))
    await env.set_delivery(second.id, status="succeeded")
    assert await manager.claim_due(env.db, request()) == []
    due = await manager.next_due_at(env.db, utcnow())
    assert due is not None and due > utcnow()


async def test_expired_leases_are_claimable_again(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    [claim] = await manager.claim_due(env.db, request("dead"))
    await env.set_delivery(claim.delivery_id, leased_until=ago(1))
    [again] = await manager.claim_due(env.db, request("alive"))
    assert again.delivery_id == claim.delivery_id
    [row] = await env.deliveries()
    assert row.leased_by == "alive"


async def test_record_outcomes_success_retry_and_failure(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    ok, retry, dead = await manager.claim_due(env.db, request())

    summary = await manager.record_outcomes(
        env.db,
        "w1",
        [
            record(ok, 204, Decision("succeeded")),
            record(retry, 500, Decision("pending", delay=60)),
            record(dead, None, Decision("failed")),
        ],
        now=utcnow(),
        disable_after=DAY,
    )

    assert summary.recorded == 3 and summary.disabled_webhooks == ()
    rows = {r.id: r for r in await env.deliveries()}
    assert (rows[ok.delivery_id].status, rows[ok.delivery_id].attempts) == ("succeeded", 1)
    assert rows[ok.delivery_id].next_attempt_at is None
    assert rows[retry.delivery_id].status == "pending"
    assert rows[retry.delivery_id].next_attempt_at > utcnow() + timedelta(seconds=50)
    assert rows[retry.delivery_id].last_status_code == 500
    assert rows[dead.delivery_id].status == "failed"
    assert all(r.leased_by is None and r.leased_until is None for r in rows.values())
    [attempt] = await env.attempts(ok.delivery_id)
    assert (attempt.status_code, attempt.succeeded, attempt.duration_ms) == (204, True, 12)
    # The last outcome in time order was a failure: the webhook is failing since then.
    webhook = await env.webhook_row(hook)
    assert webhook.failing_since is not None and webhook.is_active


async def test_outcome_of_a_lost_lease_is_stored_but_changes_nothing(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    [claim] = await manager.claim_due(env.db, request("slow"))
    await env.set_delivery(claim.delivery_id, leased_by="other")

    await manager.record_outcomes(
        env.db,
        "slow",
        [record(claim, 204, Decision("succeeded"))],
        now=utcnow(),
        disable_after=DAY,
    )
    [row] = await env.deliveries()
    assert (row.status, row.attempts, row.leased_by) == ("pending", 0, "other")
    assert len(await env.attempts(claim.delivery_id)) == 1


async def test_outcome_of_a_deleted_delivery_is_dropped(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    [claim] = await manager.claim_due(env.db, request())
    async with env.db.begin() as conn:
        await conn.execute(delete(webhooks).where(webhooks.c.id == hook))
    summary = await manager.record_outcomes(
        env.db,
        "w1",
        [record(claim, 204, Decision("succeeded"))],
        now=utcnow(),
        disable_after=DAY,
    )
    assert summary.recorded == 0


async def test_410_disables_the_webhook_and_cancels_its_pending_deliveries(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    first, *_ = await manager.claim_due(env.db, request(limit=1))

    summary = await manager.record_outcomes(
        env.db,
        "w1",
        [record(first, 410, Decision("failed", disable_webhook=True))],
        now=utcnow(),
        disable_after=DAY,
    )

    assert summary.disabled_webhooks == (hook,)
    webhook = await env.webhook_row(hook)
    assert not webhook.is_active and "410" in webhook.disabled_reason
    assert sorted(r.status for r in await env.deliveries()) == ["cancelled", "cancelled", "failed"]


async def test_long_failure_disables_and_success_resets(env: Env) -> None:
    account = await env.account()
    failing, _ = await env.webhook(account, URL, failing_since=ago(3 * 3600))
    healed, _ = await env.webhook(account, URL, failing_since=ago(3 * 3600))
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    claims = {c.webhook_id: c for c in await manager.claim_due(env.db, request())}

    summary = await manager.record_outcomes(
        env.db,
        "w1",
        [
            record(claims[failing], 500, Decision("pending", delay=60)),
            record(claims[healed], 200, Decision("succeeded")),
        ],
        now=utcnow(),
        disable_after=timedelta(hours=2),
    )

    assert summary.disabled_webhooks == (failing,)
    row = await env.webhook_row(failing)
    assert not row.is_active and "failed for 2 hours" in row.disabled_reason
    assert "HTTP 500" in row.disabled_reason
    healthy = await env.webhook_row(healed)
    assert healthy.is_active and healthy.failing_since is None


async def test_heartbeat_extends_only_this_workers_leases(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    for _ in range(2):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    await manager.register_worker(env.db, "w1", hostname="h", pid=1, now=ago(60))
    mine, theirs = await manager.claim_due(env.db, request(limit=2))
    await env.set_delivery(theirs.delivery_id, leased_by="w2")

    extended = await manager.heartbeat(
        env.db, "w1", [mine.delivery_id, theirs.delivery_id], now=utcnow(), lease_seconds=600
    )

    assert extended == 1
    rows = {r.id: r for r in await env.deliveries()}
    assert rows[mine.delivery_id].leased_until > utcnow() + timedelta(seconds=500)
    assert rows[theirs.delivery_id].leased_until < utcnow() + timedelta(seconds=60)
    async with env.db.read() as conn:
        beat = await conn.scalar(select(workers.c.heartbeat_at).where(workers.c.id == "w1"))
    assert beat is not None and beat > ago(5)


async def test_release_returns_claims_at_once(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    [claim] = await manager.claim_due(env.db, request("w1"))
    assert await manager.release_claims(env.db, "w1", [claim.delivery_id]) == 1
    [again] = await manager.claim_due(env.db, request("w2"))
    assert again.delivery_id == claim.delivery_id


async def test_cancel_pending_on_deactivation(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    for _ in range(2):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    first, _ = await env.deliveries()
    await env.set_delivery(first.id, status="succeeded")
    async with env.db.begin() as conn:
        assert await manager.cancel_pending_deliveries(conn, hook, now=utcnow()) == 1
    assert sorted(r.status for r in await env.deliveries()) == ["cancelled", "succeeded"]


async def test_prune_removes_old_dispatched_events_with_their_deliveries(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    old = [await env.event(account, created_at=utcnow() - timedelta(days=31)) for _ in range(3)]
    stale_undispatched = await env.event(account, created_at=utcnow() - timedelta(days=40))
    await manager.dispatch_events(env.db, now=utcnow(), batch_size=3)  # only the 3 oldest ids
    fresh = await env.event(account, dispatched=True)

    removed = [
        await manager.prune_batch(env.db, now=utcnow(), retention_days=30, batch=2)
        for _ in range(3)
    ]

    assert removed == [2, 1, 0]
    async with env.db.read() as conn:
        left = set((await conn.execute(select(events.c.id))).scalars())
        count = await conn.scalar(select(func.count()).select_from(deliveries))
    assert left == {stale_undispatched, fresh} and not left & set(old)
    assert count == 0


async def test_concurrent_claims_on_postgresql_take_disjoint_rows_without_waiting(
    pg_env: Env,
) -> None:
    env = pg_env
    account = await env.account()
    await env.webhook(account, URL)
    for _ in range(6):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())

    async with env.db.begin() as conn:  # the first claim's transaction stays open
        params = manager._claim_params(request("w1", limit=4))
        first = [manager._claim_of(row) for row in await env.db.deliveries.claim(conn, params)]
        # Its rows are locked, not yet leased: the second claim must skip them, not wait.
        second = await asyncio.wait_for(manager.claim_due(env.db, request("w2")), timeout=10)

    assert len(first) == 4 and len(second) == 2
    assert not {c.delivery_id for c in first} & {c.delivery_id for c in second}
    rows = await env.deliveries()
    assert sorted(r.leased_by for r in rows) == ["w1"] * 4 + ["w2"] * 2


async def test_a_batch_of_outcomes_sets_each_delivery_and_stores_each_attempt(env: Env) -> None:
    """One batch (PostgreSQL: one statement over arrays) with a success, a retry
    (an error, no status code), a final failure and a lease taken over: each row gets its own
    values, NULLs included, and only this worker's leases change."""
    account = await env.account()
    await env.webhook(account, URL)
    for _ in range(4):
        await env.event(account)
    dispatched = await manager.dispatch_events(env.db, now=utcnow())
    assert (dispatched.events, dispatched.deliveries) == (4, 4)
    ok, retry, failed, lost = await manager.claim_due(env.db, request())
    await env.set_delivery(lost.delivery_id, leased_by="other")
    retry_record = replace(
        record(retry, None, Decision("pending", delay=60)),
        result=AttemptResult(
            started_at=utcnow(), duration_ms=3, error=ConnectFailed("refused"), response_body=None
        ),
    )
    batch = [
        record(ok, 204, Decision("succeeded")),
        retry_record,
        record(failed, 500, Decision("failed")),
        record(lost, 204, Decision("succeeded")),
    ]
    await manager.record_outcomes(env.db, "w1", batch, now=utcnow(), disable_after=DAY)

    rows = {row.id: row for row in await env.deliveries()}
    state = {
        key: (rows[c.delivery_id].status, rows[c.delivery_id].attempts)
        for key, c in (("ok", ok), ("retry", retry), ("failed", failed), ("lost", lost))
    }
    assert state == {
        "ok": ("succeeded", 1),
        "retry": ("pending", 1),
        "failed": ("failed", 1),
        "lost": ("pending", 0),
    }
    assert rows[retry.delivery_id].next_attempt_at == retry_record.next_attempt_at
    assert rows[retry.delivery_id].last_error == "connection failed: refused"
    assert rows[retry.delivery_id].last_status_code is None
    assert rows[failed.delivery_id].last_status_code == 500
    assert rows[ok.delivery_id].leased_by is None
    assert rows[lost.delivery_id].leased_by == "other"
    [attempt] = await env.attempts(retry.delivery_id)
    assert (attempt.status_code, attempt.succeeded) == (None, False)
    assert attempt.error == "connection failed: refused"
    assert (attempt.duration_ms, attempt.response_body) == (3, None)
    [attempt] = await env.attempts(ok.delivery_id)
    assert (attempt.status_code, attempt.succeeded, attempt.response_body) == (204, True, "ok")
    assert len(await env.attempts(lost.delivery_id)) == 1


async def _rollups(env: Env) -> list[dict[str, Any]]:
    async with env.db.read() as conn:
        rows = (await conn.execute(select(attempt_rollups))).all()
    return sorted(
        (dict(row._mapping) for row in rows),
        key=lambda r: (
            r["webhook_id"],
            r["span"],
            r["bucket_start"],
            r["status"],
            r["latency_bin"],
        ),
    )


def _facts(records: list[AttemptRecord]) -> list[stats.AttemptFacts]:
    return [
        stats.AttemptFacts(
            r.webhook_id, r.result.started_at, r.result.status_code, r.result.duration_ms
        )
        for r in records
    ]


async def test_refused_rows_in_a_batch_are_stored_only_as_far_as_they_may_be(env: Env) -> None:
    """A batch where every attempt succeeded (PostgreSQL: the one statement, in autocommit)
    with a delivery deleted meanwhile, a lease taken over by another worker and a delivery
    twice: the deleted one leaves no attempt and no count; the taken-over one's attempt is
    stored and counted but its state is the new holder's; the one given twice moves once (by
    its first outcome) with both attempts stored; and the webhook, failing with its circuit
    open before, is healthy again."""
    account = await env.account()
    hook, _ = await env.webhook(account, URL, failing_since=ago(600))
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    ok, lost, gone = await manager.claim_due(env.db, request())
    async with env.db.begin() as conn:
        opened = {"consecutive_failures": CIRCUIT_OPEN_AFTER, "next_probe_at": ago(-60)}
        await conn.execute(update(webhooks).where(webhooks.c.id == hook).values(**opened))
    await env.set_delivery(lost.delivery_id, leased_by="other")
    async with env.db.begin() as conn:
        await conn.execute(delete(deliveries).where(deliveries.c.id == gone.delivery_id))
    first = record(ok, 204, Decision("succeeded"))
    again = record(ok, 200, Decision("succeeded"))
    batch = [
        first,
        record(gone, 204, Decision("succeeded")),
        record(lost, 204, Decision("succeeded")),
        again,
    ]

    summary = await manager.record_outcomes(env.db, "w1", batch, now=utcnow(), disable_after=DAY)

    assert (summary.recorded, summary.alerts, summary.disabled_webhooks) == (3, 0, ())
    rows = {row.id: row for row in await env.deliveries()}
    assert gone.delivery_id not in rows
    assert (rows[ok.delivery_id].status, rows[ok.delivery_id].attempts) == ("succeeded", 1)
    assert rows[ok.delivery_id].last_status_code == 204  # the first outcome's
    assert (rows[lost.delivery_id].status, rows[lost.delivery_id].leased_by) == ("pending", "other")
    assert [a.status_code for a in await env.attempts(ok.delivery_id)] == [204, 200]
    assert len(await env.attempts(lost.delivery_id)) == 1
    assert await env.attempts(gone.delivery_id) == []
    assert await _rollups(env) == stats.rollup_rows(_facts([first, batch[2], again]))
    healed = await env.webhook_row(hook)
    assert (healed.failing_since, healed.consecutive_failures, healed.next_probe_at) == (
        None,
        0,
        None,
    )


async def test_a_batch_counts_each_stored_attempt_in_the_rollups(env: Env) -> None:
    """Statuses, errors and latencies across two webhooks and an hour's boundary: the counters
    the recorder adds (PostgreSQL: in its one statement) are ``stats.rollup_rows``' own."""
    account = await env.account()
    await env.webhook(account, URL)
    await env.webhook(account, URL)
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    claims = await manager.claim_due(env.db, request())
    boundary = datetime(2026, 11, 23, 22, 59, 59, 500000, tzinfo=UTC)
    outcomes = itertools.cycle([(204, 3), (500, 40), (None, 1500), (200, 31), (503, 250)])
    batch = [
        replace(
            record(claim, status, Decision("pending", delay=60)),
            result=AttemptResult(
                started_at=boundary + timedelta(milliseconds=400 * i),
                duration_ms=ms,
                status_code=status,
                response_body=None,
            ),
        )
        for i, (claim, (status, ms)) in enumerate(zip(claims, outcomes, strict=False))
    ]
    assert len(batch) == 6

    await manager.record_outcomes(env.db, "w1", batch, now=utcnow(), disable_after=DAY)

    assert await _rollups(env) == stats.rollup_rows(_facts(batch))


async def test_a_batch_that_all_succeeded_is_one_statement_on_postgresql(
    pg_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is left for Python to decide: no transaction is opened (autocommit, one round
    trip); a batch with a failure opens one, for its alerts and the webhook's health."""
    account = await pg_env.account()
    await pg_env.webhook(account, URL)
    for _ in range(3):
        await pg_env.event(account)
    await manager.dispatch_events(pg_env.db, now=utcnow())
    a, b, c = await manager.claim_due(pg_env.db, request())
    opened = count_transactions(pg_env, monkeypatch)
    ok = [record(a, 204, Decision("succeeded")), record(b, 200, Decision("succeeded"))]
    await manager.record_outcomes(pg_env.db, "w1", ok, now=utcnow(), disable_after=DAY)
    assert opened == []
    summary = await manager.record_outcomes(
        pg_env.db, "w1", [record(c, 500, Decision("failed"))], now=utcnow(), disable_after=DAY
    )
    assert len(opened) == 1 and summary.alerts == 1
    assert sorted(r.status for r in await pg_env.deliveries()) == [
        "failed",
        "succeeded",
        "succeeded",
    ]


async def test_dispatch_numbers_a_batch_for_the_stream_in_event_order(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    made = [await env.event(account) for _ in range(3)]
    await manager.dispatch_events(env.db, now=utcnow())
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    async with env.db.read() as conn:
        mine = select(events.c.id, events.c.stream_seq).where(events.c.account_id == account)
        seqs = (await conn.execute(mine)).all()
    numbered = dict(seqs)
    first = [numbered[event] for event in made]
    assert first == sorted(first) and len(set(numbered.values())) == 4
    assert sorted(numbered.values()) == list(range(first[0], first[0] + 4))


async def test_fan_out_numbers_the_events_in_the_order_given_after_the_highest(env: Env) -> None:
    """The store's ``number_and_claim`` gives its event ids the next stream numbers in the
    order of its list (not the ids' order), one apart, after the highest number already
    given, and marks them dispatched; the events left out keep no number."""
    account = await env.account()
    earlier = await env.event(account, dispatched=True)
    made = [await env.event(account) for _ in range(4)]
    async with env.db.begin() as conn:
        await conn.execute(update(events).where(events.c.id == earlier).values(stream_seq=41))
        await env.db.deliveries.number_and_claim(conn, [made[2], made[0], made[3]], None)
    async with env.db.read() as conn:
        mine = select(events.c.id, events.c.stream_seq, events.c.dispatched)
        rows = {row.id: row for row in (await conn.execute(mine)).all()}
    last = max(row.stream_seq for row in rows.values() if row.id not in made)
    assert last >= 41
    assert [rows[made[i]].stream_seq for i in (2, 0, 3)] == [last + 1, last + 2, last + 3]
    assert all(rows[made[i]].dispatched for i in (2, 0, 3))
    assert rows[made[1]].stream_seq is None and not rows[made[1]].dispatched


async def test_rate_limited_work_found_beside_a_claim_is_taken_with_the_slots_left(
    env: Env,
) -> None:
    """A worker whose last look found no rate-limited work looks beside the next claim (on
    PostgreSQL concurrently): what the look finds is claimed in the same round if slots are
    left, and first from the next round on (the memo), so it never waits for a free round."""
    account = await env.account()
    plain, _ = await env.webhook(account, URL)
    limited, _ = await env.webhook(account, URL)
    async with env.db.begin() as conn:
        await conn.execute(update(webhooks).where(webhooks.c.id == limited).values(rate_limit=100))
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    memo = ClaimMemo(rate_limited_due=False)

    first = await manager.claim_due(env.db, replace(request(limit=4), memo=memo))
    taken = sorted(c.webhook_id for c in first)
    if env.db.is_sqlite:  # one writer: the rate-limited ones are always looked at first
        assert taken == sorted([limited] * 3 + [plain])
    else:  # the three plain ones, and the slot left for the rate-limited webhook
        assert taken == sorted([plain] * 3 + [limited])
        assert memo.rate_limited_due  # it looks first next round
    assert all(c.not_before is not None for c in first if c.webhook_id == limited)

    await env.event(account)
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    second = await manager.claim_due(env.db, replace(request(limit=1), memo=memo))
    # One slot: the rate-limited webhook's delivery goes first.
    assert [c.webhook_id for c in second] == [limited]


async def test_a_failing_claim_on_postgres_raises_once_the_look_beside_it_has_finished(
    pg_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look beside a claim runs in a task of its own while the claim runs in the round's:
    a claim that fails raises its error only after that look has finished (what the look found
    is remembered, and no statement is left running on a pooled connection)."""
    account = await pg_env.account()
    limited, _ = await pg_env.webhook(account, URL)
    async with pg_env.db.begin() as conn:
        await conn.execute(update(webhooks).where(webhooks.c.id == limited).values(rate_limit=100))
    await pg_env.event(account)
    await manager.dispatch_events(pg_env.db, now=utcnow())
    memo = ClaimMemo(rate_limited_due=False)

    async def failing_claim(source: Any, params: Any) -> list[Any]:
        raise ConnectionError("the claim failed")

    monkeypatch.setattr(pg_env.db.deliveries, "claim", failing_claim)
    with pytest.raises(ConnectionError, match="the claim failed"):
        await manager.claim_due(pg_env.db, replace(request(limit=4), memo=memo))
    assert memo.rate_limited_due  # the look ran to its end and found the due work


async def test_a_dispatch_on_postgres_holds_the_stream_lock_from_its_insert(pg_env: Env) -> None:
    """The fan-out's INSERT takes the stream's lock itself (no statement of its own): until the
    dispatch commits, no other dispatcher can number events; once it has, one can."""
    account = await pg_env.account()
    hook, _ = await pg_env.webhook(account, URL)
    await pg_env.event(account)
    try_lock = text("SELECT pg_try_advisory_xact_lock(7264711845227365) AS taken")
    async with pg_env.db.begin() as conn:
        [event] = await fetch_all(conn, queries.UNDISPATCHED, {"limit": 10})
        store = pg_env.db.deliveries
        await store.insert(conn, [manager.delivery_row(event, hook, utcnow())])
        await store.number_and_claim(conn, [event.id], None)
        async with pg_env.db.begin() as other:
            assert not (await other.execute(try_lock)).scalar_one()
    async with pg_env.db.begin() as other:
        assert (await other.execute(try_lock)).scalar_one()
    [row] = await pg_env.deliveries()
    assert row.webhook_id == hook


def count_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL of every statement PostgreSQL connections run from now on (BEGIN and COMMIT are
    the transaction's, not counted)."""
    ran: list[str] = []
    execute, execute_many = PostgresConnection._execute, PostgresConnection.execute_many

    async def counted(self: PostgresConnection, statement: Any, params: Any) -> Any:
        ran.append(str(statement))
        return await execute(self, statement, params)

    async def counted_many(self: PostgresConnection, statement: Any, rows: Any) -> None:
        ran.append(str(statement))
        await execute_many(self, statement, rows)

    monkeypatch.setattr(PostgresConnection, "_execute", counted)
    monkeypatch.setattr(PostgresConnection, "execute_many", counted_many)
    return ran


async def test_a_dispatch_round_on_postgres_is_three_statements(
    pg_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events with their webhooks and the look, the INSERT, the numbering with the claim:
    three round trips between BEGIN and COMMIT, where they were six (each a wait for a
    PostgreSQL on a shared core, and a new event waits for about one and a half rounds)."""
    account = await pg_env.account()
    hook, _ = await pg_env.webhook(account, URL)
    await pg_env.webhook(account, URL, ["call.started"])  # not subscribed
    made = [await pg_env.event(account) for _ in range(2)]
    ran = count_statements(monkeypatch)

    dispatched, claims = await manager.dispatch_and_claim(pg_env.db, request(limit=1))

    assert len(ran) == 3, ran
    assert (dispatched.events, dispatched.deliveries) == (2, 2)
    assert [(c.event_id, c.webhook_id) for c in claims] == [(made[0], hook)]
    async with pg_env.db.read() as conn:
        mine = select(events.c.id, events.c.dispatched, events.c.stream_seq).where(
            events.c.account_id == account
        )
        rows = {row.id: row for row in (await conn.execute(mine)).all()}
    assert all(rows[event].dispatched for event in made)
    assert rows[made[1]].stream_seq == rows[made[0]].stream_seq + 1
    [first, second] = await pg_env.deliveries(webhook_id=hook)
    assert (first.event_id, first.leased_by) == (made[0], "w1")
    assert (second.event_id, second.status, second.leased_by) == (made[1], "pending", None)


async def test_a_dispatch_round_numbers_after_another_dispatch_commits(pg_env: Env) -> None:
    """Two dispatchers at once: the second waits at its INSERT for the stream's lock, and its
    numbering (in the statement that claims) reads the highest number after the first
    committed, so no number is handed out twice and none is committed after a higher one. It
    fails if the numbering were in the statement that takes the lock (a snapshot from before
    the wait)."""
    account = await pg_env.account()
    await pg_env.webhook(account, URL)
    first_events = [await pg_env.event(account) for _ in range(2)]
    async with pg_env.db.begin() as conn:
        store = pg_env.db.deliveries
        look = await store.look(conn, limit=10, now=utcnow())
        assert [row.id for row in look.events] == first_events
        [hook] = [row.id for row in look.webhooks]
        rows = [manager.delivery_row(event, hook, utcnow()) for event in look.events]
        await store.insert(conn, rows)  # holds the stream's lock
        later = [await pg_env.event(account) for _ in range(2)]
        other = asyncio.create_task(manager.dispatch_and_claim(pg_env.db, request(worker="w2")))
        waiting = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")

        async def waits_for_the_lock() -> int:
            async with pg_env.db.read() as reader:
                return int((await reader.execute(waiting)).scalar_one())

        await eventually(waits_for_the_lock, what="the other round waiting for the stream lock")
        assert not other.done()
        params = queries.claim_params(
            worker="w1",
            now=utcnow(),
            until=utcnow() + DAY,
            limit=10,
            per_endpoint=10,
            busy={},
            saturated=[],
            open_after=CIRCUIT_OPEN_AFTER,
            probe_room=manager.PROBE_ROOM,
        )
        claimed = await store.number_and_claim(conn, first_events, params)
        assert [row.event_id for row in claimed] == first_events
    dispatched, claims = await other
    assert dispatched.events == 2 and [c.event_id for c in claims] == later
    async with pg_env.db.read() as conn:
        mine = select(events.c.id, events.c.stream_seq).where(events.c.account_id == account)
        numbered = dict((await conn.execute(mine)).all())
    seqs = [numbered[event] for event in first_events + later]
    assert seqs == list(range(seqs[0], seqs[0] + 4))


async def test_a_dispatch_round_claims_a_new_rate_limited_delivery_with_a_stale_memo(
    env: Env,
) -> None:
    """A round's look cannot see the deliveries it inserts: a new delivery to a rate-limited
    webhook is claimed in that round (with its start slot) all the same, however the last look
    went, and a rate-limited webhook's older due work too."""
    account = await env.account()
    limited, _ = await env.webhook(account, URL)
    async with env.db.begin() as conn:
        await conn.execute(update(webhooks).where(webhooks.c.id == limited).values(rate_limit=100))
    event = await env.event(account)
    memo = ClaimMemo(rate_limited_due=False)

    _, claims = await manager.dispatch_and_claim(env.db, replace(request(), memo=memo))

    assert [(c.event_id, c.webhook_id) for c in claims] == [(event, limited)]
    assert claims[0].not_before is not None
    [row] = await env.deliveries(event_id=event)
    await env.set_delivery(row.id, leased_by=None, leased_until=None)  # due again, not new
    memo.rate_limited_due = False
    _, again = await manager.dispatch_and_claim(env.db, replace(request(), memo=memo))
    assert [c.delivery_id for c in again] == [row.id]


async def test_readying_on_postgres_opens_connections_and_parses_the_workers_statements(
    pg_env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    """``ready`` opens ``READY_CONNECTIONS`` pooled connections and has each parse the worker's
    statements (a fresh server's first events otherwise paid for both). Every statement of
    the list parses: one that did not would be logged, and each readied connection but the one
    asking last parsed the list's last statement, in order after the others."""
    with caplog.at_level("WARNING", logger="hookline.storage"):
        await manager.ready(pg_env.db, per_endpoint=8)
    assert caplog.records == []
    assert await client_backends(pg_env.db) >= READY_CONNECTIONS
    last = NOTIFY.compiled(pg_env.db.dialect).sql  # the worker's readying ends with the wake-up
    assert (await others_last_statements(pg_env.db)).count(last) >= READY_CONNECTIONS - 1


async def test_a_young_databases_delivery_tables_are_analyzed_while_they_grow(
    pg_env: Env,
) -> None:
    """``analyze_young_tables`` analyzes ``deliveries`` and ``events`` when PostgreSQL never has
    (until then each connection's cached generic plans are those made for a table of a few
    pages), and again once one has grown by half since, and only then."""
    tables = ("deliveries", "events")
    account = await pg_env.account()

    async def add_events(n: int) -> None:
        now = utcnow()
        rows = [
            {
                "id": f"evt_{account}_{now.timestamp()}_{i}",
                "account_id": account,
                "type": "contact.created",
                "data": {"n": i},
                "created_at": now,
                "dispatched": True,
            }
            for i in range(n)
        ]
        async with pg_env.db.begin() as conn:
            await conn.execute(events.insert(), rows)

    await add_events(100)
    assert await unanalyzed_tables(pg_env.db, tables) == set(tables)  # a fresh database
    assert await manager.analyze_young_tables(pg_env.db) is True
    assert await unanalyzed_tables(pg_env.db, tables) == set()
    assert await manager.analyze_young_tables(pg_env.db) is False  # as it was analyzed
    await add_events(20)  # not by half
    assert await manager.analyze_young_tables(pg_env.db) is False
    await add_events(200)
    assert await manager.analyze_young_tables(pg_env.db) is True
    assert await manager.analyze_young_tables(pg_env.db) is False


async def test_readying_connections_that_fails_is_logged_and_rounds_go_on(
    pg_env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    account = await pg_env.account()
    hook, _ = await pg_env.webhook(account, URL)
    made = await pg_env.event(account)

    async def refused(statements: Any, *, connections: int) -> None:
        raise ConnectionError("refused")

    monkeypatch.setattr(pg_env.db, "prepare", refused)
    with caplog.at_level("WARNING", logger="hookline.storage"):
        await manager.ready(pg_env.db, per_endpoint=8)
    assert "readying connections for the delivery worker failed" in caplog.text
    _, claims = await manager.dispatch_and_claim(pg_env.db, request(limit=1))
    assert [(c.event_id, c.webhook_id) for c in claims] == [(made, hook)]
