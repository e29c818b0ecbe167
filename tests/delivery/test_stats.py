"""The rollups (``delivery.stats``): latency bins exact below 32 ms, then within 5%; and the
counters a batch of attempts adds."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hookline.delivery import stats


def test_latency_bins_are_exact_then_within_five_percent() -> None:
    for ms in range(stats.EXACT_BELOW_MS):
        assert stats.bin_value(stats.latency_bin(ms)) == ms
    for ms in (32, 33, 100, 999, 1000, 4321, 15000, 60000):
        assert abs(stats.bin_value(stats.latency_bin(ms)) - ms) <= 0.026 * ms


def _counted_one_by_one(attempts: list[stats.AttemptFacts]) -> list[dict[str, Any]]:
    """The rollups' definition, attempt by attempt and span by span: what ``rollup_rows``
    must add, in the sorted order concurrent recorders rely on not to deadlock."""
    counts: Counter[tuple[str, int, datetime, str, int]] = Counter()
    for attempt in attempts:
        status = stats.status_key(attempt.status_code)
        latency = stats.latency_bin(attempt.duration_ms)
        for span in stats.SPANS:
            bucket = stats.bucket_start(attempt.started_at, span)
            counts[(attempt.webhook_id, span, bucket, status, stats.ANY_LATENCY)] += 1
            counts[(attempt.webhook_id, span, bucket, stats.ANY_STATUS, latency)] += 1
    names = ("webhook_id", "span", "bucket_start", "status", "latency_bin")
    return [
        {**dict(zip(names, key, strict=True)), "attempts": n} for key, n in sorted(counts.items())
    ]


def test_a_batch_adds_one_counter_per_bucket_status_and_latency_bin_in_order() -> None:
    """Random batches around minute, ten-minute and hour boundaries (and a timezone other than
    UTC): the counters equal counting each attempt in each span, row for row and in order."""
    hour = datetime(2026, 11, 23, 22, 59, 58, tzinfo=UTC)
    elsewhere = timezone(timedelta(hours=-5))
    for seed in range(50):
        rng = random.Random(seed)
        attempts = [
            stats.AttemptFacts(
                webhook_id=rng.choice(["wh_a", "wh_b", "wh_c"]),
                started_at=(hour + timedelta(milliseconds=rng.randint(0, 4000))).astimezone(
                    rng.choice([UTC, elsewhere])
                ),
                status_code=rng.choice([200, 204, 500, None]),
                duration_ms=rng.choice([0, 3, 31, 32, 250, 15000]),
            )
            for _ in range(rng.randint(1, 60))
        ]
        rows = stats.rollup_rows(attempts)
        assert rows == _counted_one_by_one(attempts), seed
        assert all(row["bucket_start"].tzinfo is not None for row in rows)
