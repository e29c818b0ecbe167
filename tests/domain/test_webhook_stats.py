"""``domain.webhook_stats``: statistics read from the rollups the worker records agree with a
count over every attempt, for any window."""

from __future__ import annotations

import math
import random
from collections import Counter
from datetime import datetime, timedelta

from sqlalchemy import insert

from hookline import ids
from hookline.delivery import stats
from hookline.domain import webhook_stats
from hookline.storage.models import deliveries, delivery_attempts
from hookline.timeutil import to_millis, utcnow
from tests.delivery.helpers import Env


def test_latency_bins_are_exact_then_within_five_percent() -> None:
    for ms in range(stats.EXACT_BELOW_MS):
        assert stats.bin_value(stats.latency_bin(ms)) == ms
    for ms in (32, 33, 100, 999, 1000, 4321, 15000, 60000):
        assert abs(stats.bin_value(stats.latency_bin(ms)) - ms) <= 0.026 * ms


def test_a_window_is_cut_into_hours_ten_minutes_minutes_and_seconds() -> None:
    def at(text: str) -> datetime:
        return datetime.fromisoformat(f"2026-11-23T{text}+00:00")

    plan = webhook_stats.plan_window(at("10:17:30"), at("13:05:10"))
    assert sorted(plan.rollups) == [
        (60, at("10:18:00"), at("10:20:00")),
        (60, at("13:00:00"), at("13:05:00")),
        (600, at("10:20:00"), at("11:00:00")),
        (3600, at("11:00:00"), at("13:00:00")),
    ]
    assert sorted(plan.raw) == [(at("10:17:30"), at("10:18:00")), (at("13:05:00"), at("13:05:10"))]
    inside = webhook_stats.plan_window(at("10:17:30"), at("10:17:50"))
    assert inside.rollups == [] and inside.raw == [(at("10:17:30"), at("10:17:50"))]


async def test_rollup_figures_equal_a_count_of_every_attempt(env: Env) -> None:
    account = await env.account()
    hook, _ = await env.webhook(account, "http://127.0.0.1:9/hook")
    event = await env.event(account, dispatched=True)
    delivery = ids.delivery_id()
    now = utcnow()
    async with env.db.begin() as conn:
        await conn.execute(
            insert(deliveries).values(
                id=delivery,
                account_id=account,
                webhook_id=hook,
                event_id=event,
                event_type="contact.created",
                status="succeeded",
                attempts=0,
                created_at=now,
                updated_at=now,
            )
        )
    rng = random.Random(7)
    start = now - timedelta(hours=5)
    facts = [
        stats.AttemptFacts(
            webhook_id=hook,
            started_at=to_millis(start + timedelta(seconds=rng.uniform(0, 5 * 3600))),
            status_code=rng.choice([200, 200, 200, 204, 500, 503, None]),
            duration_ms=int(rng.expovariate(1 / 120)),
        )
        for _ in range(3000)
    ]
    async with env.db.begin() as conn:
        await conn.execute(
            insert(delivery_attempts),
            [
                {
                    "delivery_id": delivery,
                    "webhook_id": f.webhook_id,
                    "started_at": f.started_at,
                    "duration_ms": f.duration_ms,
                    "status_code": f.status_code,
                    "error": None,
                    "response_body": None,
                    "succeeded": f.status_code is not None and 200 <= f.status_code < 300,
                }
                for f in facts
            ],
        )
        # Two batches, as two recorder flushes would add them: counters accumulate.
        await stats.add_to_rollups(conn, facts[:1000])
        await stats.add_to_rollups(conn, facts[1000:])

    windows = [
        (start, now),
        (start + timedelta(minutes=7, seconds=13), now - timedelta(minutes=61)),
    ]
    for _ in range(6):
        a, b = sorted(rng.uniform(0, 5 * 3600) for _ in range(2))
        windows.append((start + timedelta(seconds=a), start + timedelta(seconds=b)))
    windows.append((start + timedelta(seconds=100.5), start + timedelta(seconds=130.25)))
    for since, until in windows:
        since, until = to_millis(since), to_millis(until)
        async with env.db.read() as conn:
            got = await webhook_stats.webhook_stats(conn, hook, since, until)
        inside = [f for f in facts if since <= f.started_at < until]
        codes = Counter(stats.status_key(f.status_code) for f in inside)
        ok = sum(n for code, n in codes.items() if stats.is_success(code))
        assert got["attempts"] == len(inside), (since, until)
        assert got["succeeded"] == ok and got["failed"] == len(inside) - ok
        assert got["status_codes"] == dict(sorted(codes.items()))
        bins = sorted(stats.latency_bin(f.duration_ms) for f in inside)
        for name, fraction in webhook_stats.PERCENTILES:
            expected = stats.bin_value(bins[math.ceil(fraction * len(bins)) - 1]) if bins else None
            assert got["latency_ms"][name] == expected, (name, since, until)

    async with env.db.read() as conn:
        bars = await webhook_stats.outcome_series(conn, hook, start, now)
    assert sum(b.succeeded + b.failed for b in bars) == len(facts)
    assert len(bars) <= webhook_stats.MAX_BARS
