"""A soak of per-account retention on SQLite: an account keeping 2 days gets a day's events
(each with its delivery) per round, and the sweep runs with its clock a round later each time;
once the window is full the rows and the database file (its WAL checkpointed) stay flat."""

from __future__ import annotations

import asyncio
import os
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from hookline.domain.retention import sweep
from hookline.storage.models import deliveries, events
from hookline.storage.statements import Query
from hookline.storage.wal import truncate_wal
from hookline.timeutil import utcnow
from tests.api.conftest import http, owner, worker_app
from tests.conftest import Account
from tests.support.retention import delivered_events

__all__ = ["http", "owner", "worker_app"]

pytestmark = pytest.mark.slow

DAY = 1000
"""Events (each delivered once) the account makes in a simulated day."""
DAYS = 12
KEPT_DAYS = 2
COUNT_EVENTS = Query(select(func.count()).select_from(events))
COUNT_DELIVERIES = Query(select(func.count()).select_from(deliveries))


@pytest.fixture(scope="module")
def backend() -> str:
    return "sqlite"


async def _counts(worker_app: FastAPI) -> tuple[int, int]:
    async with worker_app.state.db.read() as conn:
        return await conn.scalar(COUNT_EVENTS), await conn.scalar(COUNT_DELIVERIES)


async def _size(worker_app: FastAPI) -> int:
    path = worker_app.state.settings.sqlite_path
    assert await asyncio.to_thread(truncate_wal, path)
    return await asyncio.to_thread(os.path.getsize, path)


async def test_the_database_stays_flat_once_the_window_is_full(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    db = worker_app.state.db
    max_days = worker_app.state.settings.retention_days
    short = await http.patch(
        "/v1/account", json={"retention_days": KEPT_DAYS}, headers=owner.headers
    )
    assert short.status_code == 200, short.text
    hook = await http.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        headers=owner.headers,
    )
    assert hook.status_code == 201, hook.text
    days_began = []
    sizes: list[int] = []
    counts: list[Any] = []
    for day in range(DAYS):
        days_began.append(utcnow())
        await delivered_events(db, owner.id, hook.json()["id"], DAY)
        # A day later than the day before began: that day and this one are kept.
        if day:
            await sweep(db, max_days=max_days, now=days_began[day - 1] + timedelta(days=KEPT_DAYS))
        sizes.append(await _size(worker_app))
        counts.append(await _counts(worker_app))
    print(f"sizes {sizes}, counts {counts}")
    assert counts[KEPT_DAYS:] == [(KEPT_DAYS * DAY, KEPT_DAYS * DAY)] * (DAYS - KEPT_DAYS)
    assert sizes[-1] <= 1.1 * sizes[DAYS // 2 - 1]
