"""Liveness and readiness probes (no authentication; they reveal nothing)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import ORJSONResponse

from hookline.api.deps import DB

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="The process is alive")
async def healthz() -> ORJSONResponse:
    return ORJSONResponse({"status": "ok"})


@router.get("/readyz", summary="The database is reachable")
async def readyz(db: DB) -> ORJSONResponse:
    try:
        await db.ping()
    except Exception:
        return ORJSONResponse({"status": "unavailable", "database": "unreachable"}, 503)
    return ORJSONResponse({"status": "ok", "database": "ok"})
