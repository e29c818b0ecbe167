"""The retention sweep deleting a large backlog of one account keeps another account's p99
within 25%, on SQLite (whose one writer the sweep shares with the API's writes): the sweep runs
in the app's process (as with ``HOOKLINE_WORKER_IN_PROCESS``), its clock moved past the window,
beside the other account's POST /v1/contacts; rounds with and without it alternate, and the
medians of their p99s are compared; each sweep is stopped at the round's end, the backlog
far from gone."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import bindparam, func, select

from hookline.domain.retention import sweep
from hookline.storage.models import events
from hookline.storage.statements import Query
from hookline.timeutil import utcnow
from tests.api.conftest import http, owner, worker_app
from tests.conftest import Account, new_account
from tests.support.retention import delivered_events

__all__ = ["http", "owner", "worker_app"]

BACKLOG = 20_000
ROUNDS = 7
SAMPLES = 300
COUNT_EVENTS = Query(
    select(func.count()).select_from(events).where(events.c.account_id == bindparam("account_id"))
)


@pytest.fixture(scope="module")
def backend() -> str:
    return "sqlite"


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[max(0, int(len(ordered) * 0.99) - 1)]


async def _post_contact(http: httpx.AsyncClient, who: Account, n: int) -> float:
    started = time.perf_counter()
    body = {"first_name": "B", "phone_number": f"+1646555{n % 10_000:04d}"}
    created = await http.post("/v1/contacts", json=body, headers=who.headers)
    taken = time.perf_counter() - started
    assert created.status_code == 201, created.text
    return taken


async def _sample(http: httpx.AsyncClient, who: Account, n: int) -> list[float]:
    return [await _post_contact(http, who, i) for i in range(n)]


@pytest.mark.xfail(
    reason="each step of the sweep ends in a commit (fsync) that a request arriving then waits for",
    strict=False,
)
async def test_a_sweep_keeps_another_accounts_p99_within_a_quarter(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    db = worker_app.state.db
    max_days = worker_app.state.settings.retention_days
    other = await new_account(db)
    short = await http.patch("/v1/account", json={"retention_days": 1}, headers=owner.headers)
    assert short.status_code == 200, short.text
    hook = await http.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        headers=owner.headers,
    )
    assert hook.status_code == 201, hook.text
    await delivered_events(db, owner.id, hook.json()["id"], BACKLOG)
    await _sample(http, other, 20)  # warm
    alone: list[float] = []
    swept: list[float] = []
    for _ in range(ROUNDS):
        alone.append(p99(await _sample(http, other, SAMPLES)))
        later = utcnow() + timedelta(days=2)
        sweeping = asyncio.create_task(sweep(db, max_days=max_days, now=later))
        swept.append(p99(await _sample(http, other, SAMPLES)))
        assert not sweeping.done()  # the backlog outlasts the round
        sweeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeping
    async with db.read() as conn:
        left = await conn.scalar(COUNT_EVENTS, {"account_id": owner.id})
    assert left < BACKLOG  # the sweep did delete while the other account was sampled
    print(f"p99s alone {[round(t * 1e3, 2) for t in alone]} ms, "
          f"sweeping {[round(t * 1e3, 2) for t in swept]} ms")  # fmt: skip
    assert statistics.median(swept) <= 1.25 * statistics.median(alone)
