"""Liveness and readiness probes, and ``GET /metrics`` (no authentication; they reveal no keys,
ids or payloads: keep /metrics off the public internet, it shows traffic shape)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import Response

from hookline import metrics
from hookline.api.deps import DB
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain.queue import queue_stats, worker_heartbeats
from hookline.storage.db import Database
from hookline.timeutil import utcnow

router = APIRouter(tags=["operations"], route_class=DirectRoute)


@router.get("/healthz", summary="The process is alive")
async def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"})


@router.get("/readyz", summary="The database is reachable")
async def readyz(db: DB) -> JSONResponse:
    try:
        await db.ping()
    except Exception:
        return JSONResponse({"status": "unavailable", "database": "unreachable"}, 503)
    return JSONResponse({"status": "ok", "database": "ok"})


@router.get("/metrics", include_in_schema=False)
async def metrics_page(request: Request) -> Response:
    settings = request.app.state.settings
    await refresh_gauges(
        request.app.state.db, now=utcnow(), live_within=settings.delivery_lease_seconds
    )
    return Response(metrics.scrape(), media_type=CONTENT_TYPE_LATEST)


async def refresh_gauges(db: Database, *, now: datetime, live_within: float) -> None:
    stats = await queue_stats(db, now=now)
    metrics.QUEUE_DEPTH.set(stats.pending_deliveries)
    metrics.DUE_DEPTH.set(stats.due_deliveries)
    metrics.UNDISPATCHED.set(stats.undispatched_events)
    metrics.OLDEST_PENDING_AGE.set(stats.oldest_due_age_seconds)
    heartbeats = await worker_heartbeats(db)
    metrics.forget_reaped_workers({worker_id for worker_id, _ in heartbeats})
    live = 0
    for worker_id, heartbeat_at in heartbeats:
        age = max(0.0, (now - heartbeat_at).total_seconds())
        metrics.show_heartbeat(worker_id, age)
        live += age <= live_within
    metrics.WORKERS_LIVE.set(live)
