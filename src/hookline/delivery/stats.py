"""Per-webhook delivery statistics kept as rollups, never computed from a scan of every attempt:
what the worker records (the read side is ``domain.webhook_stats``).

Recording a batch of attempts (``manager.record_outcomes``) also adds them, in the same
transaction, to ``attempt_rollups``, for minute, ten-minute and hour buckets: one counter per
(webhook, bucket, status) with ``latency_bin`` = ``ANY_LATENCY``, and one per (webhook, bucket,
latency bin) with ``status`` = ``ANY_STATUS``. Two one-dimensional counts, not their product:
a bucket has a few statuses plus a few dozen latency bins, not hundreds of combinations.
Latencies are kept as a histogram: exact below ``EXACT_BELOW_MS``, then bins 5% wide, so a
reported percentile is within 2.5% of the truth. The buckets and bins are defined here, once,
for the recorder and the reader.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hookline.storage.db import Connection
from hookline.storage.queries import stats as queries

MINUTE = 60
TEN_MINUTES = 600
HOUR = 3600
# Largest first: a window takes whole hours, then whole ten minutes, then whole minutes.
SPANS = (HOUR, TEN_MINUTES, MINUTE)
EXACT_BELOW_MS = 32
BIN_GROWTH = 1.05
ERROR_STATUS = "error"
ANY_STATUS = "*"
ANY_LATENCY = -1


@dataclass(frozen=True)
class AttemptFacts:
    """What the rollups need of one attempt."""

    webhook_id: str
    started_at: datetime
    status_code: int | None
    duration_ms: int


def latency_bin(duration_ms: int) -> int:
    """The histogram bin of a latency: the value itself below ``EXACT_BELOW_MS``, then one bin
    per 5% of growth."""
    if duration_ms < EXACT_BELOW_MS:
        return max(0, duration_ms)
    return EXACT_BELOW_MS + int(math.log(duration_ms / EXACT_BELOW_MS) / math.log(BIN_GROWTH))


def bin_value(latency: int) -> float:
    """The latency a bin stands for: exact values, or the middle of a 5% bin."""
    if latency < EXACT_BELOW_MS:
        return float(latency)
    middle: float = EXACT_BELOW_MS * BIN_GROWTH ** (latency - EXACT_BELOW_MS + 0.5)
    return round(middle, 1)


def status_key(status_code: int | None) -> str:
    return str(status_code) if status_code is not None else ERROR_STATUS


def is_success(status: str) -> bool:
    return status.isdigit() and 200 <= int(status) < 300


def bucket_start(moment: datetime, span: int) -> datetime:
    second = int(moment.timestamp())
    return datetime.fromtimestamp(second - second % span, UTC)


def rollup_rows(attempts: Iterable[AttemptFacts]) -> list[dict[str, Any]]:
    """The counters a batch of attempts adds (``queries.stats.rollup_rows``)."""
    facts = (
        (
            a.webhook_id,
            int(a.started_at.timestamp()),
            status_key(a.status_code),
            latency_bin(a.duration_ms),
        )
        for a in attempts
    )
    return queries.rollup_rows(facts, spans=SPANS, any_status=ANY_STATUS, any_latency=ANY_LATENCY)


async def add_to_rollups(conn: Connection, attempts: Sequence[AttemptFacts]) -> None:
    """Count ``attempts`` in the rollups, in the caller's transaction. Rows are written in one
    sorted order, so concurrent recorders on PostgreSQL never deadlock on them."""
    await queries.add_to_rollups(conn, rollup_rows(attempts))


async def prune_rollups(conn: Connection, cutoff: datetime) -> int:
    result = await conn.execute(queries.PRUNE_ROLLUPS, {"cutoff": cutoff})
    return int(result.rowcount or 0)
