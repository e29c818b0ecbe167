"""A webhook's delivery statistics over a window (``GET /v1/webhooks/{id}/stats``, the
dashboard's figures) and the outcomes chart, read from the rollups the worker keeps
(``delivery.stats``: the buckets and latency bins are defined there, once).

A window's figures are read from

* hour rows for the whole hours inside it,
* ten-minute rows, then minute rows, for the whole buckets left at its two ends,
* the attempts themselves (``ix_delivery_attempts_webhook_id_started_at``) for the seconds left
  at its two ends (at most two minutes of attempts),

so the cost grows with the window's length in hours and the number of distinct latency bins,
not with the number of attempts. The statements are in ``storage.queries.stats``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.delivery.stats import (
    ANY_LATENCY,
    HOUR,
    MINUTE,
    SPANS,
    bin_value,
    bucket_start,
    is_success,
    latency_bin,
    status_key,
)
from hookline.storage.db import Connection
from hookline.storage.queries import stats as queries
from hookline.timeutil import iso

PERCENTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))
# The dashboard's chart: at most this many bars, whatever the window.
MAX_BARS = 48


def _ceil(moment: datetime, span: int) -> datetime:
    floor = bucket_start(moment, span)
    return floor if floor == moment else floor + timedelta(seconds=span)


@dataclass(frozen=True)
class _Plan:
    """A window cut into what each source answers: [start, end) ranges of whole buckets of a
    span (``rollups``: (span, start, end)), and of attempts (``raw``)."""

    rollups: list[tuple[int, datetime, datetime]]
    raw: list[tuple[datetime, datetime]]


def _cut(since: datetime, until: datetime, span: int) -> tuple[datetime, datetime] | None:
    """The whole ``span`` buckets inside [since, until), or None."""
    first, last = _ceil(since, span), bucket_start(until, span)
    return (first, last) if first < last else None


def plan_window(since: datetime, until: datetime) -> _Plan:
    """[since, until) as the fewest rollup rows: the whole buckets of the largest span inside
    it, then each remaining end the same way with the next span, then attempts for the rest."""
    plan = _Plan([], [])
    _cover(plan, since, until, 0)
    return plan


def _cover(plan: _Plan, start: datetime, end: datetime, level: int) -> None:
    if start >= end:
        return
    if level == len(SPANS):
        plan.raw.append((start, end))
        return
    span = SPANS[level]
    whole = _cut(start, end, span)
    if whole is None:
        _cover(plan, start, end, level + 1)
        return
    plan.rollups.append((span, *whole))
    _cover(plan, start, whole[0], level + 1)
    _cover(plan, whole[1], end, level + 1)


async def _counts(
    conn: Connection, webhook_id: str, plan: _Plan
) -> tuple[Counter[str], Counter[int]]:
    """Attempts by status and by latency bin in the planned window: the rollups in one
    statement, the attempts in another (round trips are most of the cost on PostgreSQL)."""
    by_status: Counter[str] = Counter()
    by_latency: Counter[int] = Counter()
    if plan.rollups:
        sums, params = queries.rollup_sums(webhook_id, plan.rollups)
        for status, latency, n in await conn.execute(sums, params):
            if latency == ANY_LATENCY:
                by_status[status] += int(n)
            else:
                by_latency[latency] += int(n)
    if plan.raw:
        raw, params = queries.attempts_in(webhook_id, plan.raw)
        for row in await conn.execute(raw, params):
            by_status[status_key(row.status_code)] += 1
            by_latency[latency_bin(row.duration_ms)] += 1
    return by_status, by_latency


def _percentiles(by_latency: Counter[int]) -> dict[str, float | None]:
    total = sum(by_latency.values())
    if total == 0:
        return {name: None for name, _ in PERCENTILES}
    ordered = sorted(by_latency.items())
    out: dict[str, float | None] = {}
    for name, fraction in PERCENTILES:
        rank = math.ceil(fraction * total)
        seen = 0
        for latency, n in ordered:
            seen += n
            if seen >= rank:
                out[name] = bin_value(latency)
                break
    return out


async def webhook_stats(
    conn: Connection, webhook_id: str, since: datetime, until: datetime
) -> dict[str, Any]:
    """The contract's statistics object for [since, until)."""
    by_status, by_latency = await _counts(conn, webhook_id, plan_window(since, until))
    attempts = sum(by_status.values())
    succeeded = sum(n for status, n in by_status.items() if is_success(status))
    pending = await conn.scalar(queries.PENDING_OF_WEBHOOK, {"webhook_id": webhook_id})
    cut = await conn.scalar(queries.FILTER_ERRORS_OF_WEBHOOK, {"webhook_id": webhook_id})
    return {
        "webhook_id": webhook_id,
        "since": iso(since),
        "until": iso(until),
        "attempts": attempts,
        "succeeded": succeeded,
        "failed": attempts - succeeded,
        "success_rate": round(succeeded / attempts, 4) if attempts else None,
        "latency_ms": _percentiles(by_latency),
        "status_codes": dict(sorted(by_status.items())),
        "pending": int(pending or 0),
        # Not windowed: every evaluation of its filter the limits cut since it was created.
        "filter_errors": int(cut or 0),
    }


@dataclass(frozen=True)
class Bar:
    """One bar of the outcomes chart."""

    start: datetime
    succeeded: int
    failed: int


async def outcome_series(
    conn: Connection, webhook_id: str, since: datetime, until: datetime
) -> list[Bar]:
    """Succeeded and failed attempts over [since, until) in at most ``MAX_BARS`` bars, from
    the rollups (the bars at the ends count their whole bucket)."""
    span = HOUR if until - since > timedelta(hours=2) else MINUTE
    first = bucket_start(since, span)
    bars = max(1, math.ceil((until - first).total_seconds() / span))
    per_bar = math.ceil(bars / MAX_BARS)
    width = span * per_bar
    params = {
        "webhook_id": webhook_id,
        "span": span,
        "since": first,
        "until": until,
        "latency_bin": ANY_LATENCY,
    }
    ok: Counter[int] = Counter()
    bad: Counter[int] = Counter()
    for start, status, n in await conn.execute(queries.OUTCOMES_BY_BUCKET, params):
        moment = _as_datetime(start)
        index = int((moment - first).total_seconds()) // width
        (ok if is_success(status) else bad)[index] += int(n)
    count = math.ceil(bars / per_bar)
    return [Bar(first + timedelta(seconds=i * width), ok[i], bad[i]) for i in range(count)]


def _as_datetime(value: Any) -> datetime:
    # A SQLite text value (group by on a typed column keeps the type; be safe regardless).
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
