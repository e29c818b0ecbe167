"""The statements of per-webhook delivery statistics (``delivery.stats`` decides the buckets
and reads the figures): the rollup counters the outcome recorder adds to, and the reads of a
window. A window's reads vary only in how many ranges they cover, so they are ``QueryShapes``
by that count, their bounds parameters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import bindparam, delete, func, select, text, union_all

from hookline.storage.connector import Connection
from hookline.storage.models import UTCDateTime, attempt_rollups, delivery_attempts, webhooks
from hookline.storage.models import deliveries as dlv
from hookline.storage.statements import Query, QueryShapes

# The same ON CONFLICT text runs on SQLite (>= 3.24) and PostgreSQL. Rows are given in one
# sorted order (``rollup_rows``), so concurrent recorders never deadlock.
ADD_TO_ROLLUPS = Query(
    text(
        "INSERT INTO attempt_rollups (webhook_id, span, bucket_start, status, latency_bin, "
        "attempts) VALUES (:webhook_id, :span, :bucket_start, :status, :latency_bin, :attempts) "
        "ON CONFLICT (webhook_id, span, bucket_start, status, latency_bin) "
        "DO UPDATE SET attempts = attempt_rollups.attempts + excluded.attempts"
    ).bindparams(bindparam("bucket_start", type_=UTCDateTime()))
)


def rollup_rows(
    facts: Iterable[tuple[str, int, str, int]],
    *,
    spans: Sequence[int],
    any_status: str,
    any_latency: int,
) -> list[dict[str, Any]]:
    """The counters a batch adds, from each attempt's (webhook, epoch second, status, latency
    bin): per (webhook, span, bucket), one row per status (latency ``any_latency``) and one per
    latency bin (status ``any_status``), each key once (as ON CONFLICT requires), in one sorted
    order so concurrent recorders never deadlock on them."""
    counts: Counter[tuple[str, int, int, str, int]] = Counter()
    for (hook, second, status, latency), n in Counter(facts).items():
        for span in spans:
            start = second - second % span
            counts[(hook, span, start, status, any_latency)] += n
            counts[(hook, span, start, any_status, latency)] += n
    starts: dict[int, datetime] = {}
    rows = []
    # Sorted with the bucket as epoch seconds: the same order as by its datetime.
    for (hook, span, start, status, latency), n in sorted(counts.items()):
        bucket = starts.get(start)
        if bucket is None:
            bucket = starts[start] = datetime.fromtimestamp(start, UTC)
        rows.append(
            {
                "webhook_id": hook,
                "span": span,
                "bucket_start": bucket,
                "status": status,
                "latency_bin": latency,
                "attempts": n,
            }
        )
    return rows


async def add_to_rollups(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add each row's ``attempts`` to its counter (created at that count), in ``conn``'s
    transaction and in the rows' order."""
    if rows:
        await conn.execute_many(ADD_TO_ROLLUPS, list(rows))


PRUNE_ROLLUPS = Query(
    delete(attempt_rollups).where(
        attempt_rollups.c.bucket_start < bindparam("cutoff", type_=UTCDateTime())
    )
)
"""Delete the counters of buckets that start before ``cutoff``."""
PENDING_OF_WEBHOOK = Query(
    select(func.count())
    .select_from(dlv)
    .where(dlv.c.webhook_id == bindparam("webhook_id"), dlv.c.status == text("'pending'"))
)
FILTER_ERRORS_OF_WEBHOOK = Query(
    select(webhooks.c.filter_errors).where(webhooks.c.id == bindparam("webhook_id"))
)
OUTCOMES_BY_BUCKET = Query(
    select(
        attempt_rollups.c.bucket_start,
        attempt_rollups.c.status,
        func.sum(attempt_rollups.c.attempts),
    )
    .where(
        attempt_rollups.c.webhook_id == bindparam("webhook_id"),
        attempt_rollups.c.span == bindparam("span"),
        attempt_rollups.c.bucket_start >= bindparam("since", type_=UTCDateTime()),
        attempt_rollups.c.bucket_start < bindparam("until", type_=UTCDateTime()),
        attempt_rollups.c.latency_bin == bindparam("latency_bin"),
    )
    .group_by(attempt_rollups.c.bucket_start, attempt_rollups.c.status)
)
"""(bucket start, status, attempts) of a webhook's ``span`` buckets in [since, until), for
one ``latency_bin`` (the by-status counters)."""


Range = tuple[datetime, datetime]


def _rollup_sums(ranges: int) -> Any:
    # Each range is a branch of a UNION ALL, not an OR of ranges, so each is one index range.
    r = attempt_rollups.c
    branches = [
        select(r.status, r.latency_bin, r.attempts).where(
            r.webhook_id == bindparam("webhook_id"),
            r.span == bindparam(f"span_{i}"),
            r.bucket_start >= bindparam(f"start_{i}", type_=UTCDateTime()),
            r.bucket_start < bindparam(f"end_{i}", type_=UTCDateTime()),
        )
        for i in range(ranges)
    ]
    rows = union_all(*branches).subquery()
    return select(rows.c.status, rows.c.latency_bin, func.sum(rows.c.attempts)).group_by(
        rows.c.status, rows.c.latency_bin
    )


def _attempts_in(ranges: int) -> Any:
    a = delivery_attempts.c
    branches = [
        select(a.status_code, a.duration_ms).where(
            a.webhook_id == bindparam("webhook_id"),
            a.started_at >= bindparam(f"start_{i}", type_=UTCDateTime()),
            a.started_at < bindparam(f"end_{i}", type_=UTCDateTime()),
        )
        for i in range(ranges)
    ]
    return union_all(*branches) if len(branches) > 1 else branches[0]


_ROLLUP_SUMS = QueryShapes(_rollup_sums)
_ATTEMPTS_IN = QueryShapes(_attempts_in)


def rollup_sums(
    webhook_id: str, ranges: Sequence[tuple[int, datetime, datetime]]
) -> tuple[Query, dict[str, Any]]:
    """(status, latency bin, attempts) summed over the rollups of ``ranges`` ((span, start,
    end): that span's buckets starting in [start, end)), and its parameters."""
    params: dict[str, Any] = {"webhook_id": webhook_id}
    for i, (span, start, end) in enumerate(ranges):
        params.update({f"span_{i}": span, f"start_{i}": start, f"end_{i}": end})
    return _ROLLUP_SUMS.get(len(ranges)), params


def attempts_in(webhook_id: str, ranges: Sequence[Range]) -> tuple[Query, dict[str, Any]]:
    """(status code, duration) of each of the webhook's attempts started in ``ranges``
    ([start, end) each), and its parameters."""
    params: dict[str, Any] = {"webhook_id": webhook_id}
    for i, (start, end) in enumerate(ranges):
        params.update({f"start_{i}": start, f"end_{i}": end})
    return _ATTEMPTS_IN.get(len(ranges)), params
