"""Retention the account chooses: its events (with their deliveries and attempt logs) are
deleted, and its calls' transcripts blanked, once older than its ``retention_days``, bounded
by the server's ``HOOKLINE_RETENTION_DAYS`` (whose own prune, ``delivery.worker``, keeps
that maximum for every account). Run by every delivery worker as a ``Chore``, in small
batches, each its own short transaction, paced (``domain.pacing``) to leave the API's requests
the loop and the writer; two processes sweeping at once delete the same rows at most once (a
row already gone is simply not there)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from hookline.domain.pacing import Pace
from hookline.settings import Settings
from hookline.storage.db import Connection, Database
from hookline.storage.queries import retention as queries
from hookline.timeutil import utcnow

BATCH = 500
"""The most rows one transaction deletes or blanks."""
CHUNK = 25
"""The rows one statement takes: a transaction ends as soon as its step of the pace is spent."""
REST_PER_STEP = 9
"""The sweep is nobody's request: it rests longer than a bulk upsert, its commits hold the
writer (and make checkpoints) that the API's writes would otherwise have."""
# How often the sweep runs: retention is counted in days, so a few minutes late is nothing.
SWEEP_EVERY_SECONDS = 300.0


Step = Callable[[Connection, str, str], Awaitable[int]]


def _hex_bound(moment: datetime) -> str:
    """The first 12 hex digits of a UUIDv7 made at ``moment``, then the smallest rest: every
    id made earlier sorts below it."""
    millis = int(moment.timestamp() * 1000)
    return f"{millis:012x}" + "0" * 20


def event_bound(moment: datetime) -> str:
    return "evt_" + _hex_bound(moment)


def call_bound(moment: datetime) -> str:
    spelled = _hex_bound(moment)
    return f"call-{spelled[:8]}-{spelled[8:12]}-{spelled[12:16]}-{spelled[16:20]}-{spelled[20:]}"


async def sweep(db: Database, *, max_days: int, now: datetime | None = None) -> int:
    """Every account keeping less than ``max_days``: its expired rows, batch by batch. Returns
    how many events were deleted and transcripts blanked."""
    now = now or utcnow()
    async with db.read() as conn:
        windows = (await conn.execute(queries.SHORTER_WINDOWS, {"max_days": max_days})).all()
    done = 0
    for account_id, days in windows:
        cutoff = now - timedelta(days=days)
        done += await _batches(db, _delete_events, account_id, event_bound(cutoff))
        done += await _batches(db, _blank_transcripts, account_id, call_bound(cutoff))
    return done


async def _batches(db: Database, step: Step, account_id: str, before_id: str) -> int:
    """``step`` (up to ``CHUNK`` rows) until the account has no more, paced (``Pace``): each
    transaction ends once its step is spent or has done ``BATCH`` rows, then the sweep rests so
    the API's requests have the loop and the writer."""
    pace = Pace(REST_PER_STEP)
    total = 0
    while True:
        in_batch = 0
        async with db.begin() as conn:
            while in_batch < BATCH:
                done = await step(conn, account_id, before_id)
                in_batch += done
                if done < CHUNK:
                    return total + in_batch
                if pace.spent():
                    break
        total += in_batch
        await pace.rest()


async def _delete_events(conn: Connection, account_id: str, before_id: str) -> int:
    wanted = {"account_id": account_id, "before_id": before_id, "limit": CHUNK}
    doomed = list((await conn.scalars(queries.EXPIRED_EVENTS, wanted)).all())
    if doomed:
        await conn.execute(queries.DELETE_EVENTS, {"account_id": account_id, "ids": doomed})
    return len(doomed)


async def _blank_transcripts(conn: Connection, account_id: str, before_id: str) -> int:
    wanted = {"account_id": account_id, "before_id": before_id, "limit": CHUNK}
    rows = (await conn.execute(queries.TRANSCRIBED_CALLS, wanted)).all()
    for call_id, analysis in rows:
        blanked = {**analysis, "transcript": None}
        params = {"account_id": account_id, "call_id": call_id, "analysis": blanked}
        await conn.execute(queries.SET_ANALYSIS, params)
    return len(rows)


def chore_run(settings: Settings) -> Any:
    """The chore's ``run(db)``: the sweep bounded by the server's retention."""

    async def run(db: Database) -> int:
        return await sweep(db, max_days=settings.retention_days)

    return run
