"""How long ``GET /v1/webhooks/{id}/stats`` takes to compute its figures over 1 million attempts.

    .venv/bin/python -m bench.webhook_stats_query [--attempts 1000000] [--database-url URL]

Seeds one webhook with ``--attempts`` attempts spread over the last 24 hours (straight into
``delivery_attempts`` and, through ``delivery.stats.add_to_rollups``, the rollups the recorder
maintains), then times ``domain.webhook_stats.webhook_stats`` for the default window (the last
24 h) and for a window with ragged ends, and, for comparison, one aggregate scan over every attempt
of the window. Without ``--database-url``: a SQLite file in a temporary directory. A targeted
measurement, not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import func, insert, select, text

from hookline import ids
from hookline.delivery import stats
from hookline.domain import webhook_stats
from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts, deliveries, delivery_attempts, events, webhooks
from hookline.timeutil import to_millis, utcnow

CHUNK = 50_000
RUNS = 25


async def _seed_webhook(db: Database, now: datetime) -> tuple[str, str]:
    account, hook, event, delivery = (
        ids.account_id(),
        ids.webhook_id(),
        ids.event_id(),
        ids.delivery_id(),
    )
    async with db.begin() as conn:
        await conn.execute(insert(accounts).values(id=account, name="bench", created_at=now))
        await conn.execute(
            insert(webhooks).values(
                id=hook, account_id=account, url="http://127.0.0.1:9/", name=None,
                events=["contact.created"], is_active=True, secret_enc="-",
                previous_secret_enc=None, previous_secret_expires_at=None,
                disabled_reason=None, failing_since=None, created_at=now, updated_at=now,
            )
        )  # fmt: skip
        await conn.execute(
            insert(events).values(
                id=event, account_id=account, type="contact.created", data={},
                previous_attributes=None, created_at=now, dispatched=True,
                target_webhook_id=None, about_webhook_id=None, trace_context=None,
            )
        )  # fmt: skip
        await conn.execute(
            insert(deliveries).values(
                id=delivery, account_id=account, webhook_id=hook, event_id=event,
                event_type="contact.created", status="succeeded", attempts=1,
                created_at=now, updated_at=now,
            )
        )  # fmt: skip
    return hook, delivery


async def _seed_attempts(db: Database, hook: str, delivery: str, count: int, now: datetime) -> None:
    rng = random.Random(1)
    start = now - timedelta(hours=24)
    for offset in range(0, count, CHUNK):
        facts = [
            stats.AttemptFacts(
                webhook_id=hook,
                # In time order, as attempts are recorded: index inserts append.
                started_at=to_millis(start + timedelta(seconds=(offset + i) * 86_400 / count)),
                status_code=rng.choice((200, 200, 200, 200, 204, 500, 503, None)),
                duration_ms=int(rng.lognormvariate(4.5, 0.8)),
            )
            for i in range(min(CHUNK, count - offset))
        ]
        rows = [
            {
                "delivery_id": delivery, "webhook_id": hook, "started_at": f.started_at,
                "duration_ms": f.duration_ms, "status_code": f.status_code, "error": None,
                "response_body": None, "succeeded": f.status_code in (200, 204),
            }
            for f in facts
        ]  # fmt: skip
        async with db.begin() as conn:
            await conn.execute(insert(delivery_attempts), rows)
            await stats.add_to_rollups(conn, facts)


async def _timed(db: Database, hook: str, since: datetime, until: datetime) -> list[float]:
    took = []
    for _ in range(RUNS):
        began = time.perf_counter()
        async with db.read() as conn:
            figures = await webhook_stats.webhook_stats(conn, hook, since, until)
        took.append((time.perf_counter() - began) * 1000)
    print(f"  attempts in window: {figures['attempts']:,}; latency {figures['latency_ms']}")
    return took


async def _scan(db: Database, hook: str, since: datetime, until: datetime) -> float:
    a = delivery_attempts.c
    began = time.perf_counter()
    async with db.read() as conn:
        await conn.execute(
            select(a.status_code, func.count(), func.avg(a.duration_ms))
            .where(a.webhook_id == hook, a.started_at >= since, a.started_at < until)
            .group_by(a.status_code)
        )
    return (time.perf_counter() - began) * 1000


def _report(label: str, took: list[float]) -> None:
    ordered = sorted(took)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    print(f"{label}: median {statistics.median(took):.1f} ms, p95 {p95:.1f} ms ({RUNS} runs)")


async def main(database_url: str, count: int) -> None:
    db = Database(Settings(database_url=database_url, secret_key="bench"))
    try:
        await upgrade_to_head(db)
        now = utcnow()
        hook, delivery = await _seed_webhook(db, now)
        began = time.perf_counter()
        await _seed_attempts(db, hook, delivery, count, now)
        print(f"seeded {count:,} attempts in {time.perf_counter() - began:.1f} s ({database_url})")
        if not db.is_sqlite:
            # What autovacuum does after this many inserts; the planner needs the statistics.
            async with db.begin() as conn:
                await conn.execute(text("ANALYZE"))
        default = (now - timedelta(hours=24), now)
        ragged = (now - timedelta(hours=23, minutes=41, seconds=17.5), now - timedelta(seconds=42))
        _report("stats, last 24 h", await _timed(db, hook, *default))
        _report("stats, ragged 23.7 h window", await _timed(db, hook, *ragged))
        scan = await _scan(db, hook, *default)
        print(f"for comparison, one GROUP BY over every attempt: {scan:.0f} ms")
    finally:
        await db.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=1_000_000)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.database_url or f"sqlite:///{Path(directory) / 'stats.db'}"
        asyncio.run(main(url, args.attempts))
