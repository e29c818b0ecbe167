"""``domain.recovery.recover`` in batches: exact windows, no duplicates, nothing succeeded
resent."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta

from sqlalchemy import insert

from hookline.delivery import manager
from hookline.domain import recovery
from hookline.domain.events import event_row
from hookline.storage.models import events
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env
from tests.support.wakeups import wake_ups


async def _missed_events(env: Env, account: str, count: int) -> list[str]:
    """``count`` dispatched events written in one burst, as a bulk import would: their UUIDv7
    ids run ahead of the clock (one millisecond each), so ids cannot bound a window's end."""
    rows = [event_row(account, "contact.created", {"n": i}) for i in range(count)]
    for row in rows:
        row["dispatched"] = True
    async with env.db.begin() as conn:
        await conn.execute(insert(events), rows)
    return [str(row["id"]) for row in rows]


async def test_a_burst_of_missed_events_is_recovered_in_batches_exactly_once(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, "http://127.0.0.1:9/hook")
    since = utcnow() - timedelta(seconds=5)
    event_ids = await _missed_events(env, account, 2500)
    window = recovery.RecoveryWindow(since, utcnow())

    async with env.db.read() as conn:
        assert await recovery.count_recoverable(conn, account, hook, window) == 2500
    with wake_ups(env.db) as woken:
        queued = await recovery.recover(env.db, account, hook, window, batch=300)
    assert queued == 2500 and len(woken) == 9  # each batch's commit woke the workers
    rows = await env.deliveries(webhook_id=hook)
    assert sorted(r.event_id for r in rows) == sorted(event_ids)
    assert await recovery.recover(env.db, account, hook, window, batch=300) == 0


async def test_concurrent_recoveries_of_one_webhook_create_each_delivery_once(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, "http://127.0.0.1:9/hook")
    since = utcnow() - timedelta(seconds=5)
    await _missed_events(env, account, 600)
    window = recovery.RecoveryWindow(since, utcnow())
    results = await asyncio.gather(
        *(recovery.recover(env.db, account, hook, window, batch=100) for _ in range(3))
    )
    assert sum(r or 0 for r in results) == 600
    per_event = Counter(r.event_id for r in await env.deliveries(webhook_id=hook))
    assert len(per_event) == 600 and set(per_event.values()) == {1}


async def test_only_failed_and_cancelled_in_the_window_are_sent_again(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, "http://127.0.0.1:9/hook", ["contact.created"])
    other, _ = await env.webhook(account, "http://127.0.0.1:9/other", ["contact.created"])
    old = await env.event(account, created_at=utcnow() - timedelta(hours=2))
    states = ("succeeded", "failed", "cancelled", "pending")
    fresh = {state: await env.event(account) for state in states}
    await manager.dispatch_events(env.db, now=utcnow())
    for row in await env.deliveries():
        state = next((s for s, e in fresh.items() if e == row.event_id), "failed")
        await env.set_delivery(row.id, status=state, next_attempt_at=None)
    window = recovery.RecoveryWindow(utcnow() - timedelta(minutes=1), utcnow())

    assert await recovery.recover(env.db, account, hook, window) == 2
    mine = {r.event_id: r for r in await env.deliveries(webhook_id=hook)}
    assert (
        mine[fresh["failed"]].status == "pending" and mine[fresh["cancelled"]].status == "pending"
    )
    assert mine[fresh["succeeded"]].status == "succeeded"
    assert mine[old].status == "failed"  # before the window
    theirs = {r.event_id: r.status for r in await env.deliveries(webhook_id=other)}
    assert theirs[fresh["failed"]] == "failed"  # another webhook's are not touched

    async with env.db.begin() as conn:
        await manager.disable_webhook(conn, hook, "test", now=utcnow())
    try:
        await recovery.recover(env.db, account, hook, window)
    except recovery.WebhookNotActive:
        pass
    else:
        raise AssertionError("recovering a disabled webhook must be refused")
    assert await recovery.recover(env.db, "acct_other", hook, window) is None
