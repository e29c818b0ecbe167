"""Every call ends exactly once, with one ``call.completed``: the caller's final statuses,
``canceled`` among them, and ``timed-out`` when the sweeper ends a call past its account's
``max_call_seconds``; sweepers racing on two ``Database`` objects end each call once; a call
the server ended refuses completion and analysis (409). On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from hookline.app import create_app
from hookline.domain.calls import sweep_overdue_calls
from hookline.domain.events import list_events
from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.timeutil import iso, parse_iso, utcnow
from tests.api.test_calls import complete, start_call
from tests.conftest import Account, make_database_url, make_settings, new_account
from tests.support.receiver import Receiver

LONG_AGO = timedelta(hours=2)  # past the default max_call_seconds (3600)


async def completed_events(db: Database, account: Account) -> list[dict[str, Any]]:
    async with db.read() as conn:
        events = await list_events(conn, account.id, limit=1000, event_type="call.completed")
    return list(reversed(events))


async def overdue_call(client: httpx.AsyncClient, account: Account) -> Any:
    return await start_call(client, account.headers, call_started_at=iso(utcnow() - LONG_AGO))


@pytest.mark.parametrize("status", ["completed", "failed", "no-answer", "busy", "canceled"])
async def test_every_final_status_fires_one_call_completed(
    client: httpx.AsyncClient, db: Database, account: Account, status: str
) -> None:
    call = await start_call(client, account.headers)
    response = await complete(client, account.headers, call["id"], call_status=status)
    assert response.status_code == 200, response.text
    assert response.json()["call_status"] == status
    again = await complete(client, account.headers, call["id"], call_status="completed")
    assert again.status_code == 409
    [event] = await completed_events(db, account)
    assert event["data"] == response.json()


async def test_timed_out_is_the_servers_status_alone(
    client: httpx.AsyncClient, account: Account
) -> None:
    call = await start_call(client, account.headers)
    response = await complete(client, account.headers, call["id"], call_status="timed-out")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["fields"][0]["field"] == "call_status"


async def test_the_sweeper_ends_an_overdue_call_once_at_its_deadline(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    overdue = await overdue_call(client, account)
    fresh = await start_call(client, account.headers)
    # The session's database is shared: other tests' calls may be overdue too.
    assert await sweep_overdue_calls(db) >= 1
    assert await sweep_overdue_calls(db) == 0
    ended = (await client.get(f"/v1/calls/{overdue['id']}", headers=account.headers)).json()
    assert ended["call_status"] == "timed-out"
    assert ended["duration_seconds"] == 3600
    started = parse_iso(overdue["call_started_at"])
    assert parse_iso(ended["call_ended_at"]) == started + timedelta(seconds=3600)
    [event] = await completed_events(db, account)
    assert event["data"] == ended
    still = (await client.get(f"/v1/calls/{fresh['id']}", headers=account.headers)).json()
    assert still["call_status"] == "in-progress"


async def test_a_call_the_server_ended_refuses_completion_and_analysis(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    call = await overdue_call(client, account)
    await sweep_overdue_calls(db)
    completing = await complete(client, account.headers, call["id"])
    assert completing.status_code == 409
    assert completing.json()["error"]["code"] == "conflict"
    analysing = await client.post(
        f"/v1/calls/{call['id']}/analysis", json={"budget": 5}, headers=account.headers
    )
    assert analysing.status_code == 409
    assert len(await completed_events(db, account)) == 1


async def test_the_account_limit_at_the_start_sets_the_deadline(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    patched = await client.patch(
        "/v1/account", json={"max_call_seconds": 60}, headers=account.headers
    )
    assert patched.status_code == 200, patched.text
    short = await start_call(
        client, account.headers, call_started_at=iso(utcnow() - timedelta(seconds=90))
    )
    await sweep_overdue_calls(db)
    ended = (await client.get(f"/v1/calls/{short['id']}", headers=account.headers)).json()
    assert (ended["call_status"], ended["duration_seconds"]) == ("timed-out", 60)


async def test_two_sweepers_on_two_databases_end_each_call_once(
    client: httpx.AsyncClient, settings: Settings, account: Account, db: Database
) -> None:
    calls = [await overdue_call(client, account) for _ in range(30)]
    first, second = Database(settings), Database(settings)
    try:
        ended = await asyncio.gather(
            *(sweep_overdue_calls(each) for each in (first, second, first, second))
        )
    finally:
        await first.dispose()
        await second.dispose()
    assert sum(ended) >= len(calls)  # the shared database may hold other overdue calls
    per_call = Counter(e["data"]["id"] for e in await completed_events(db, account))
    assert per_call == Counter({call["id"]: 1 for call in calls})


# -- the worker's chore, with a real receiver ---------------------------------------------------


@pytest.fixture(scope="module")
async def worker_app(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[FastAPI]:
    url = make_database_url(backend, tmp_path_factory.mktemp("sweep"), request)
    app = create_app(make_settings(url, worker_in_process=True, call_sweep_seconds=0.1))
    async with app.router.lifespan_context(app):
        yield app


async def test_the_workers_sweeper_delivers_the_timed_out_call_once(
    worker_app: FastAPI,
) -> None:
    owner = await new_account(worker_app.state.db)
    transport = httpx.ASGITransport(app=worker_app)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as http,
        Receiver() as receiver,
    ):
        hook = {"url": receiver.url, "events": ["call.completed"]}
        assert (await http.post("/v1/webhooks", json=hook, headers=owner.headers)).is_success
        call = await overdue_call(http, owner)
        [delivery] = await receiver.wait_for(1)
        assert delivery.json()["data"]["id"] == call["id"]
        assert delivery.json()["data"]["call_status"] == "timed-out"
        # Nothing is left to end, and the call has its one final event.
        assert await sweep_overdue_calls(worker_app.state.db) == 0
        assert len(await completed_events(worker_app.state.db, owner)) == 1
