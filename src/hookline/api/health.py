"""Liveness and readiness probes (no authentication; they reveal nothing)."""

from __future__ import annotations

from fastapi import APIRouter

from hookline.api.deps import DB
from hookline.api.responses import JSONResponse

router = APIRouter(tags=["operations"])


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
