"""Recovery by filter (POST /v1/webhooks/{id}/recover with event_types, object_id, statuses,
backfill and dry_run): the in-process worker and real receivers, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, true

from hookline.app import create_app
from hookline.storage.db import Database
from hookline.storage.models import events
from hookline.timeutil import iso, utcnow
from tests.conftest import Account, make_database_url, make_settings, new_account
from tests.support.receiver import Receiver
from tests.support.waiting import eventually

CONTACT_TYPES = ["contact.created", "contact.updated"]


@pytest.fixture(scope="module")
async def worker_app(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[FastAPI]:
    url = make_database_url(backend, tmp_path_factory.mktemp("replay"), request)
    app = create_app(make_settings(url, worker_in_process=True, delivery_poll_seconds=0.2))
    async with app.router.lifespan_context(app):
        yield app


async def _post(http: httpx.AsyncClient, owner: Account, path: str, body: Any) -> Any:
    response = await http.post(path, json=body, headers=owner.headers)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def _contact(http: httpx.AsyncClient, owner: Account, name: str) -> str:
    body = {"first_name": name, "phone_number": "+14155552671"}
    return str((await _post(http, owner, "/v1/contacts", body))["id"])


async def _recover(
    http: httpx.AsyncClient, owner: Account, webhook_id: str, **body: Any
) -> httpx.Response:
    return await http.post(f"/v1/webhooks/{webhook_id}/recover", json=body, headers=owner.headers)


async def _all_succeeded(http: httpx.AsyncClient, owner: Account, hook: str, count: int) -> Any:
    async def listed() -> Any:
        path = f"/v1/webhooks/{hook}/deliveries"
        return (await http.get(path, headers=owner.headers)).json()

    return await eventually(
        listed, lambda rows: len(rows) == count and all(r["status"] == "succeeded" for r in rows)
    )


async def test_replay_by_object_type_and_status_counts_first(
    http: httpx.AsyncClient, owner: Account
) -> None:
    since = iso(utcnow() - timedelta(seconds=5))
    async with Receiver() as receiver:
        hook = await _post(
            http, owner, "/v1/webhooks", {"url": receiver.url, "events": CONTACT_TYPES}
        )
        ada = await _contact(http, owner, "Ada")
        await _contact(http, owner, "Grace")
        patched = await http.patch(
            f"/v1/contacts/{ada}", json={"notes": "x"}, headers=owner.headers
        )
        assert patched.status_code == 200
        await receiver.wait_for(3)
        await _all_succeeded(http, owner, hook["id"], 3)

        # Nothing failed: the default replays nothing; succeeded ones are replayed on request.
        default = await _recover(http, owner, hook["id"], since=since, dry_run=True)
        assert default.status_code == 200 and default.json() == {"would_queue": 0}
        replay = {"since": since, "statuses": ["succeeded"], "object_id": ada}
        counted = await _recover(http, owner, hook["id"], **replay, dry_run=True)
        assert counted.json() == {"would_queue": 2}
        narrowed = {**replay, "event_types": ["contact.updated"]}
        one = await _recover(http, owner, hook["id"], **narrowed, dry_run=True)
        assert one.json() == {"would_queue": 1}
        assert len(receiver.requests) == 3  # counting sent nothing

        queued = await _recover(http, owner, hook["id"], **narrowed)
        assert queued.status_code == 202 and queued.json() == {"queued": 1}
        [_, _, updated, again] = await receiver.wait_for(4)
        assert again.headers["webhook-id"] == updated.headers["webhook-id"]
        assert again.json()["type"] == "contact.updated" and again.json()["data"]["id"] == ada


async def _dispatched(db: Database, owner: Account, count: int) -> None:
    """Wait until the worker has fanned out ``count`` of the owner's events: a backfill counts
    dispatched events only (an undispatched one reaches a new webhook by the fan-out itself)."""

    async def done() -> int:
        async with db.read() as conn:
            statement = select(func.count()).where(
                events.c.account_id == owner.id, events.c.dispatched == true()
            )
            return int(await conn.scalar(statement))

    await eventually(done, lambda n: n >= count, what="the events' fan-out")


async def test_backfill_gives_a_new_webhook_the_history_of_its_types(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    since = iso(utcnow() - timedelta(seconds=5))
    first = await _contact(http, owner, "Before")
    await _contact(http, owner, "AlsoBefore")
    await _dispatched(worker_app.state.db, owner, 2)
    async with Receiver() as receiver:
        hook = await _post(
            http, owner, "/v1/webhooks", {"url": receiver.url, "events": ["contact.created"]}
        )
        clamped = await _recover(http, owner, hook["id"], since=since, dry_run=True)
        assert clamped.json()["would_queue"] == 0  # without backfill: not before it existed
        only_first = {"since": since, "backfill": True, "object_id": first}
        assert (await _recover(http, owner, hook["id"], **only_first, dry_run=True)).json() == {
            "would_queue": 1
        }
        backfill = {"since": since, "backfill": True}
        assert (await _recover(http, owner, hook["id"], **backfill, dry_run=True)).json() == {
            "would_queue": 2
        }
        done = await _recover(http, owner, hook["id"], **backfill)
        assert done.status_code == 202 and done.json()["queued"] == 2
        got = await receiver.wait_for(2)
        assert sorted(r.json()["data"]["first_name"] for r in got) == ["AlsoBefore", "Before"]
        await _all_succeeded(http, owner, hook["id"], 2)
        again = await _recover(http, owner, hook["id"], **backfill)
        assert again.json()["queued"] == 0


@pytest.mark.parametrize(
    "body",
    [
        {"statuses": []},
        {"statuses": ["bogus"]},
        {"event_types": ["contact.nope"]},
        {"event_types": []},
        {"object_id": "a b"},
        {"object_id": "x" * 101},
        {"object_id": 5},
        {"dry_run": "yes"},
        {"backfill": 1},
        {"unknown": True},
    ],
)
async def test_recover_filters_refuse_bad_input(
    http: httpx.AsyncClient, owner: Account, body: dict[str, Any]
) -> None:
    hook = await _post(
        http, owner, "/v1/webhooks", {"url": "http://127.0.0.1:9/h", "events": CONTACT_TYPES}
    )
    since = iso(utcnow() - timedelta(minutes=1))
    refused = await _recover(http, owner, hook["id"], since=since, **body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "validation_error"


async def test_a_dry_run_of_another_accounts_webhook_is_a_404(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    stranger = await new_account(worker_app.state.db, "stranger")
    hook = await _post(
        http, stranger, "/v1/webhooks", {"url": "http://127.0.0.1:9/h", "events": CONTACT_TYPES}
    )
    since = iso(utcnow() - timedelta(minutes=1))
    answer = await _recover(http, owner, hook["id"], since=since, dry_run=True)
    assert answer.status_code == 404
