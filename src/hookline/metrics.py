"""Prometheus metrics at ``GET /metrics`` (unauthenticated, like ``/healthz``: keep it off the
public internet; it shows traffic shape, never keys, ids or payloads).

Request metrics are labelled by route *template* (``/v1/contacts/{contact_id}``), never the raw
path, so their cardinality is bounded by the routes that exist. Delivery counters are module
objects the delivery engine increments where the work happens::

    from hookline import metrics
    metrics.ATTEMPT_SECONDS.observe(duration_seconds)
    metrics.ATTEMPTS.labels(result="success").inc()      # success | failure
    metrics.DELIVERIES.labels(outcome="succeeded").inc() # succeeded | failed | cancelled

Queue depth, oldest pending age and worker heartbeats are read from the database at scrape time
(``api.health``), so they are right whichever process does the delivering.

Under ``hookline serve --workers N`` every process counts in files of prometheus_client's
multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, set by the supervisor before the processes
start), and ``/metrics``, whichever process answers, adds up all of them: counters never jump
back when the scrape lands on another process. The gauges read at scrape time keep the most
recent value written by any process.
"""

from __future__ import annotations

import math
import os
import time
from typing import Final

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    multiprocess,
)
from prometheus_client.exposition import generate_latest
from starlette.types import Scope

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "hookline_http_requests_total", "HTTP requests by route template and status",
    ["method", "route", "status"],
)  # fmt: skip
REQUEST_SECONDS = Histogram(
    "hookline_http_request_duration_seconds", "HTTP request latency by route template and status",
    ["method", "route", "status"], buckets=_LATENCY_BUCKETS,
)  # fmt: skip
DELIVERIES = Counter(
    "hookline_deliveries_total", "Deliveries that reached a final state, by outcome", ["outcome"]
)
ATTEMPTS = Counter("hookline_delivery_attempts_total", "Delivery attempts by result", ["result"])
ATTEMPT_SECONDS = Histogram(
    "hookline_delivery_attempt_duration_seconds", "Duration of one delivery attempt",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 30.0),
)  # fmt: skip
OUTCOME_UNSTORED_SECONDS = Histogram(
    "hookline_delivery_outcome_unstored_seconds",
    "Per stored batch of outcomes, how long its oldest waited in memory (a crash sends those "
    "deliveries again)", buckets=_LATENCY_BUCKETS,
)  # fmt: skip
# Set at scrape time: with several processes, the latest scrape's value is the one that holds.
_LATEST: Final = "mostrecent"
QUEUE_DEPTH = Gauge(
    "hookline_delivery_queue_depth", "Deliveries pending (due or scheduled)",
    multiprocess_mode=_LATEST,
)  # fmt: skip
DUE_DEPTH = Gauge(
    "hookline_delivery_due", "Pending deliveries whose next attempt is due now",
    multiprocess_mode=_LATEST,
)  # fmt: skip
UNDISPATCHED = Gauge(
    "hookline_events_undispatched", "Committed events not yet fanned out",
    multiprocess_mode=_LATEST,
)  # fmt: skip
OLDEST_PENDING_AGE = Gauge(
    "hookline_delivery_oldest_pending_age_seconds",
    "How long the oldest due delivery has been waiting past its attempt time",
    multiprocess_mode=_LATEST,
)
WORKER_HEARTBEAT_AGE = Gauge(
    "hookline_worker_heartbeat_age_seconds", "Seconds since each worker's last heartbeat",
    ["worker"], multiprocess_mode=_LATEST,
)  # fmt: skip
WORKERS_LIVE = Gauge(
    "hookline_workers_live", "Workers whose heartbeat is recent", multiprocess_mode=_LATEST
)
_heartbeats_shown: set[str] = set()

_KNOWN_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def route_label(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    # Unmatched paths share one label: a scanner must not create a series per probed URL.
    return path if isinstance(path, str) else "unmatched"


# (method, route, status) -> its counter and histogram: ``labels()`` takes a lock and builds
# the key each time; the set is bounded (methods x route templates x statuses).
_series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def observe_request(method: str, route: str, status: int, started: float) -> None:
    """Count one response and its latency since ``started`` (``time.perf_counter()``)."""
    series = _series.get((method, route, status))
    if series is None:
        known = method if method in _KNOWN_METHODS else "OTHER"
        labels = (known, route, str(status))
        series = (REQUESTS.labels(*labels), REQUEST_SECONDS.labels(*labels))
        _series[(method, route, status)] = series
    series[0].inc()
    series[1].observe(time.perf_counter() - started)


def show_heartbeat(worker_id: str, age_seconds: float) -> None:
    WORKER_HEARTBEAT_AGE.labels(worker=worker_id).set(age_seconds)
    _heartbeats_shown.add(worker_id)


def forget_reaped_workers(present: set[str]) -> None:
    """Drop the heartbeat series of workers no longer registered (reaped since the last scrape)."""
    if not _shared_across_processes():
        WORKER_HEARTBEAT_AGE.clear()
        _heartbeats_shown.clear()
        return
    # The processes' files keep every label ever set: a reaped worker's series is marked NaN
    # (the most recent value) by each process that showed it, instead of freezing at its last age.
    for worker_id in _heartbeats_shown - present:
        WORKER_HEARTBEAT_AGE.labels(worker=worker_id).set(math.nan)
    _heartbeats_shown.intersection_update(present)


def _shared_across_processes() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def scrape() -> bytes:
    """The exposition text: this process's registry, or every process's under ``--workers N``."""
    if not _shared_across_processes():
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return generate_latest(registry)
