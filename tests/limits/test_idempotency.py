"""Idempotency-Key on POST /v1/...: replay, reuse, in-flight, expiry; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import httpx
from sqlalchemy import func, insert, select

from hookline.limits.idempotency import IdempotencyStore, request_hash
from hookline.storage.db import Database
from hookline.storage.models import idempotency_keys
from hookline.timeutil import utcnow
from tests.conftest import Account

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
    assert await IdempotencyStore(db).prune(now) >= 1
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
