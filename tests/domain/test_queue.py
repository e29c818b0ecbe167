"""``domain.queue``: the queue's gauges for ``/metrics``, on SQLite and PostgreSQL."""

from __future__ import annotations

from hookline.delivery import manager
from hookline.domain import queue
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env, ago
from tests.delivery.test_manager import URL


async def test_queue_stats(env: Env) -> None:
    account = await env.account()
    await env.webhook(account, URL)
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=ago(10), batch_size=2)
    stats = await queue.queue_stats(env.db, now=utcnow())
    assert stats.undispatched_events == 1
    assert (stats.pending_deliveries, stats.due_deliveries) == (2, 2)
    assert 9 < stats.oldest_due_age_seconds < 60
