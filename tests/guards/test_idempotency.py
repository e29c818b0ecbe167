"""Idempotency-Key on POST /v1/...: replay, reuse, in-flight, expiry; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Header
from sqlalchemy import func, insert, select, text
from starlette.types import Message

from hookline.api.deps import DB, ContactsWrite
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.app import create_app
from hookline.crypto import SecretBox
from hookline.domain.contacts import contact_creation
from hookline.guards.idempotency import IdempotencyStore, request_hash
from hookline.storage.db import Database
from hookline.storage.models import calls, idempotency_keys
from hookline.timeutil import utcnow
from tests.conftest import TEST_SECRET_KEY, Account, make_database_url, make_settings, new_account
from tests.support.waiting import eventually
from tests.support.wakeups import wake_ups

CONTACT = {"first_name": "Ada", "phone_number": "+14155550100"}


def with_key(account: Account, key: str) -> dict[str, str]:
    return {**account.headers, "Idempotency-Key": key}


async def test_twenty_concurrent_duplicates_create_one_contact_and_one_event(
    client: httpx.AsyncClient, account: Account
) -> None:
    headers = with_key(account, f"k-{uuid.uuid4()}")
    responses = await asyncio.gather(
        *(client.post("/v1/contacts", json=CONTACT, headers=headers) for _ in range(20))
    )
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {201, 409}, statuses
    created = [r for r in responses if r.status_code == 201]
    originals = [r for r in created if "idempotent-replayed" not in r.headers]
    assert len(originals) == 1
    contact_id = originals[0].json()["id"]
    for replay in created:
        assert replay.json()["id"] == contact_id
    for conflict in (r for r in responses if r.status_code == 409):
        assert conflict.json()["error"]["code"] == "conflict"

    contacts = (await client.get("/v1/contacts", headers=account.headers)).json()
    assert [c["id"] for c in contacts] == [contact_id]
    events = (await client.get("/v1/events", headers=account.headers)).json()
    assert [e["type"] for e in events] == ["contact.created"]


async def test_replay_repeats_status_body_and_location(
    client: httpx.AsyncClient, account: Account
) -> None:
    headers = with_key(account, "replay-me")
    first = await client.post("/v1/contacts", json=CONTACT, headers=headers)
    again = await client.post("/v1/contacts", json=CONTACT, headers=headers)
    assert first.status_code == again.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert again.headers["location"] == first.headers["location"]
    assert again.headers["x-request-id"] != first.headers["x-request-id"]
    assert "ratelimit" in again.headers


async def test_same_key_other_body_is_refused(client: httpx.AsyncClient, account: Account) -> None:
    headers = with_key(account, "reused")
    assert (await client.post("/v1/contacts", json=CONTACT, headers=headers)).status_code == 201
    other = await client.post(
        "/v1/contacts", json={**CONTACT, "first_name": "Eve"}, headers=headers
    )
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    contacts = (await client.get("/v1/contacts", headers=account.headers)).json()
    assert len(contacts) == 1


async def test_keys_are_scoped_per_account(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    first = await client.post("/v1/contacts", json=CONTACT, headers=with_key(account, "shared"))
    second = await client.post(
        "/v1/contacts", json=CONTACT, headers=with_key(other_account, "shared")
    )
    assert first.status_code == second.status_code == 201
    assert "idempotent-replayed" not in second.headers
    assert first.json()["id"] != second.json()["id"]


async def test_in_flight_key_is_a_409(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    body = b'{"first_name":"Ada","phone_number":"+14155550100"}'
    async with db.begin() as conn:
        await conn.execute(
            insert(idempotency_keys).values(
                account_id=account.id,
                key="busy",
                request_hash=request_hash("POST", "/v1/contacts", body),
                response_status=None,
                created_at=utcnow(),
            )
        )
    response = await client.post(
        "/v1/contacts",
        content=body,
        headers={**with_key(account, "busy"), "content-type": "application/json"},
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


async def test_a_key_expires_after_24_hours(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    async with db.begin() as conn:
        await conn.execute(
            insert(idempotency_keys).values(
                account_id=account.id,
                key="old",
                request_hash="0" * 64,  # another body: would be a 422 if it still counted
                response_status=201,
                response_headers=[],
                response_body="{}",
                created_at=utcnow() - timedelta(hours=24, seconds=1),
            )
        )
    response = await client.post("/v1/contacts", json=CONTACT, headers=with_key(account, "old"))
    assert response.status_code == 201
    assert "idempotent-replayed" not in response.headers


async def test_prune_deletes_only_expired_rows(account: Account, db: Database) -> None:
    now = utcnow()
    async with db.begin() as conn:
        for key, age in (("stale", timedelta(hours=25)), ("fresh", timedelta(hours=1))):
            await conn.execute(
                insert(idempotency_keys).values(
                    account_id=account.id, key=key, request_hash="0" * 64,
                    response_status=201, created_at=now - age,
                )
            )  # fmt: skip
    assert await IdempotencyStore(db, SecretBox(TEST_SECRET_KEY)).prune(now) >= 1
    async with db.read() as conn:
        left = await conn.scalars(
            select(idempotency_keys.c.key).where(idempotency_keys.c.account_id == account.id)
        )
        assert list(left) == ["fresh"]


async def test_a_refused_request_releases_its_key(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    headers = with_key(account, "fix-and-retry")
    bad = await client.post("/v1/contacts", json={"first_name": "Ada"}, headers=headers)
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "validation_error"
    fixed = await client.post("/v1/contacts", json=CONTACT, headers=headers)
    assert fixed.status_code == 201
    assert "idempotent-replayed" not in fixed.headers
    async with db.read() as conn:
        stored = await conn.scalar(
            select(func.count()).where(
                idempotency_keys.c.account_id == account.id,
                idempotency_keys.c.response_status == 201,
            )
        )
    assert stored == 1


async def test_key_length_is_checked(client: httpx.AsyncClient, account: Account) -> None:
    response = await client.post("/v1/contacts", json=CONTACT, headers=with_key(account, "k" * 256))
    assert response.status_code == 422
    assert response.json()["error"]["details"]["fields"][0]["field"] == "Idempotency-Key"
    ok = await client.post("/v1/contacts", json=CONTACT, headers=with_key(account, "k" * 255))
    assert ok.status_code == 201


async def test_a_key_with_control_characters_is_refused(app: FastAPI, account: Account) -> None:
    # Straight to the app: HTTP clients refuse to send such headers, a raw socket would not.
    for key in (b"nul\x00key", b"bell\x07", b"del\x7f"):
        response = await _post_raw(app, account, key)
        assert response["status"] == 422, key
        assert b"Idempotency-Key" in response["body"]


async def _post_raw(app: FastAPI, account: Account, key: bytes) -> dict[str, Any]:
    body = b'{"first_name":"Ada","phone_number":"+14155550100"}'
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/v1/contacts", "raw_path": b"/v1/contacts",
        "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
        "server": ("hookline.test", 80),
        "headers": [
            (b"host", b"hookline.test"), (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"authorization", f"Bearer {account.key}".encode()), (b"idempotency-key", key),
        ],
    }  # fmt: skip
    sent: list[Message] = []
    requests: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        return requests.pop(0) if requests else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return {
        "status": sent[0]["status"],
        "body": b"".join(m.get("body", b"") for m in sent[1:]),
    }


async def test_unauthenticated_requests_pass_through_to_their_401(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/v1/contacts", json=CONTACT, headers={"Idempotency-Key": "anything"}
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


async def test_openapi_documents_the_header_on_every_post(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/v1/openapi.json")).json()
    paths = schema["paths"].items()
    posts = [ops["post"] for path, ops in paths if "post" in ops and path.startswith("/v1/")]
    assert posts
    for post in posts:
        names = [p["name"] for p in post.get("parameters", [])]
        assert "Idempotency-Key" in names
        assert "409" in post["responses"]


async def test_a_failure_before_the_commit_leaves_neither_the_contact_nor_the_key(
    app: FastAPI, account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contact, its event, the reservation and the stored response are one transaction."""
    store: IdempotencyStore = app.state.idempotency

    def broken(_plaintext: str) -> str:
        raise RuntimeError("the stored response cannot be written")

    headers = with_key(account, "fails-at-the-end")
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as client:
        with monkeypatch.context() as patch, wake_ups(app.state.db) as woken:
            patch.setattr(store.box, "encrypt", broken)
            failed = await client.post("/v1/contacts", json=CONTACT, headers=headers)
        assert failed.status_code == 500
        assert woken == [], "the worker was woken for events that were rolled back"
        assert (await client.get("/v1/contacts", headers=account.headers)).json() == []
        assert (await client.get("/v1/events", headers=account.headers)).json() == []
        retried = await client.post("/v1/contacts", json=CONTACT, headers=headers)
        assert retried.status_code == 201
        assert "idempotent-replayed" not in retried.headers
        contacts = (await client.get("/v1/contacts", headers=account.headers)).json()
        assert [c["id"] for c in contacts] == [retried.json()["id"]]


async def test_the_worker_is_woken_once_the_request_committed(
    app: FastAPI, client: httpx.AsyncClient, account: Account
) -> None:
    headers = with_key(account, "wakes")
    with wake_ups(app.state.db) as woken:
        assert (await client.post("/v1/contacts", json=CONTACT, headers=headers)).status_code == 201
        assert len(woken) == 1
        replayed = await client.post("/v1/contacts", json=CONTACT, headers=headers)
        assert replayed.headers["idempotent-replayed"] == "true"
        assert len(woken) == 1


async def test_a_post_with_a_header_parameter_is_guarded_too(tmp_path: Path) -> None:
    router = APIRouter(route_class=DirectRoute)

    @router.post("/v1/probe", status_code=201)
    async def probe(
        auth: ContactsWrite, db: DB, name: Annotated[str, Header()] = "Probe"
    ) -> JSONResponse:
        contact, rows = contact_creation(auth.account_id, {**CONTACT, "first_name": name})
        await db.commit_rows(rows)
        return JSONResponse(contact, status_code=201)

    app = create_app(make_settings(f"sqlite:///{tmp_path / 'probe.db'}"))
    app.include_router(router)
    async with app.router.lifespan_context(app):
        owner = await new_account(app.state.db, "probe")
        reader = await new_account(app.state.db, "reader", ["contacts:read"])
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as c:
            first = await c.post("/v1/probe", headers={**with_key(owner, "probe"), "name": "Q"})
            again = await c.post("/v1/probe", headers={**with_key(owner, "probe"), "name": "Q"})
            listed = (await c.get("/v1/contacts", headers=owner.headers)).json()
            refused = await c.post("/v1/probe", headers={**with_key(reader, "probe"), "name": "Q"})
    assert first.status_code == again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json() and first.json()["first_name"] == "Q"
    assert [contact["id"] for contact in listed] == [first.json()["id"]]
    assert refused.status_code == 403


CALL = {"call_type": "inbound", "customer_phone_number": "+14155550100"}
COMPLETE = {"call_status": "completed"}


async def _new_call(client: httpx.AsyncClient, account: Account) -> str:
    response = await client.post("/v1/calls", json=CALL, headers=account.headers)
    assert response.status_code == 201, response.text
    call_id: str = response.json()["id"]
    return call_id


async def test_a_duplicate_of_a_request_in_flight_gets_409_at_once(
    app: FastAPI, client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    call_id = await _new_call(client, account)
    url = f"/v1/calls/{call_id}/complete"
    headers = with_key(account, "in-flight")
    store: IdempotencyStore = app.state.idempotency

    async def first_is_in_flight() -> bool:
        return any(slot.account_id == account.id for slot in store.in_flight)

    async with db.begin() as conn:
        # Locks the call's row (PostgreSQL) or holds the single writer (SQLite): the request
        # completing the call takes its key, then waits here.
        await conn.execute(select(calls.c.id).where(calls.c.id == call_id).with_for_update())
        first = asyncio.create_task(client.post(url, json=COMPLETE, headers=headers))
        await eventually(first_is_in_flight, bool)
        duplicate = await client.post(url, json=COMPLETE, headers=headers)
        assert duplicate.status_code == 409, duplicate.text
        assert duplicate.json()["error"]["code"] == "conflict"
    completed = await first
    assert completed.status_code == 200, completed.text
    again = await client.post(url, json=COMPLETE, headers=headers)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == completed.json()


async def test_a_duplicate_in_another_process_gets_409_at_once_on_postgres(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two apps on one PostgreSQL database stand for two processes: the second has no in-flight
    set to look at, the key's advisory lock tells it (waiting instead would deadlock here)."""
    settings = make_settings(make_database_url("postgres", tmp_path, request))
    holder, other = create_app(settings), create_app(settings)
    async with holder.router.lifespan_context(holder), other.router.lifespan_context(other):
        db: Database = holder.state.db
        account = await new_account(db, "two-processes")
        async with _client(holder) as first_client, _client(other) as other_client:
            call_id = await _new_call(first_client, account)
            url = f"/v1/calls/{call_id}/complete"
            headers = with_key(account, "elsewhere")
            async with db.begin() as conn:
                await conn.execute(
                    select(calls.c.id).where(calls.c.id == call_id).with_for_update()
                )
                first = asyncio.create_task(first_client.post(url, json=COMPLETE, headers=headers))
                await eventually(lambda: _advisory_locks(db), bool)
                duplicate = await asyncio.wait_for(
                    other_client.post(url, json=COMPLETE, headers=headers), timeout=10
                )
                assert duplicate.status_code == 409, duplicate.text
            completed = await first
            assert completed.status_code == 200, completed.text
            again = await other_client.post(url, json=COMPLETE, headers=headers)
            assert again.headers["idempotent-replayed"] == "true"
            assert again.json() == completed.json()


def _client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://hookline.test"
    )


async def _advisory_locks(db: Database) -> int:
    async with db.read() as conn:
        count = await conn.scalar(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"))
    return int(count or 0)
