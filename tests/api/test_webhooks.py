"""/v1/webhooks on SQLite and PostgreSQL: secrets, masking, validation, SSRF, quota, isolation."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update
from standardwebhooks.webhooks import Webhook

from hookline.app import create_app
from hookline.crypto import SecretBox
from hookline.domain import webhooks as domain
from hookline.domain.events import EVENT_TYPES
from hookline.storage.db import Database
from hookline.storage.models import webhooks
from hookline.timeutil import parse_iso, utcnow
from tests.conftest import Account, make_database_url, make_settings, new_account
from tests.support.api import field_errors

WEBHOOK_KEYS = {
    "id",
    "url",
    "name",
    "events",
    "is_active",
    "secret",
    "signing",
    "public_key",
    "auth",
    "disabled_reason",
    "headers",
    "filter",
    "rate_limit",
    "redact",
    "payload",
    "created_at",
    "updated_at",
}
MASKED = "whsec_********"
HOOK = {"url": "https://example.com/hooks", "events": ["contact.created", "call.completed"]}


async def create(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> Any:
    response = await client.post("/v1/webhooks", json={**HOOK, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def assert_full_secret(secret: str) -> None:
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    Webhook(secret)  # the Standard Webhooks library accepts it as a signing key


async def stored(db: Database, webhook_id: str) -> Any:
    async with db.read() as conn:
        return (await conn.execute(select(webhooks).where(webhooks.c.id == webhook_id))).one()


async def test_create_returns_every_field_and_the_full_secret(
    client: httpx.AsyncClient, app: FastAPI, db: Database, auth_headers: dict[str, str]
) -> None:
    response = await client.post("/v1/webhooks", json=HOOK, headers=auth_headers)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == WEBHOOK_KEYS
    assert body["id"].startswith("wh-")
    assert response.headers["location"] == f"/v1/webhooks/{body['id']}"
    assert body["url"] == HOOK["url"] and body["events"] == HOOK["events"]
    assert body["is_active"] is True
    assert body["name"] is None and body["disabled_reason"] is None
    assert body["created_at"] == body["updated_at"] and body["created_at"].endswith("Z")
    assert_full_secret(body["secret"])
    row = await stored(db, body["id"])
    assert body["secret"] not in row.secret_enc  # encrypted at rest
    box: SecretBox = app.state.secret_box
    assert box.decrypt(row.secret_enc) == body["secret"]


async def test_create_normalises_fields(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    body = await create(
        client,
        auth_headers,
        url="  http://example.com/in  ",
        events=["call.started", "contact.created", "call.started"],
        name="  CRM sync ",
        is_active=False,
    )
    assert body["url"] == "http://example.com/in"
    assert body["events"] == ["call.started", "contact.created"]
    assert body["name"] == "CRM sync"
    assert body["is_active"] is False
    every = await create(client, auth_headers, events=list(EVENT_TYPES), name="")
    assert every["events"] == list(EVENT_TYPES) and every["name"] is None


@pytest.mark.parametrize(
    ("payload", "field", "fragment"),
    [
        ({"events": ["contact.created", "contact.exploded"]}, "events", "contact.exploded"),
        ({"events": ["webhook.test"]}, "events", "unknown event type"),
        ({"events": []}, "events", "at least one"),
        ({"events": "contact.created"}, "events", "list"),
        ({"url": "ftp://example.com/x"}, "url", "http or https"),
        ({"url": "https://example.com/" + "x" * 2048}, "url", "at most 2048"),
        ({"url": "not a url"}, "url", "http or https"),
        ({"url": "https:///nohost"}, "url", "host"),
        ({"name": "x" * 201}, "name", "at most 200"),
        ({"is_active": "maybe"}, "is_active", "boolean"),
        ({"secret": "whsec_mine"}, "secret", "read-only"),
        ({"id": "wh-mine"}, "id", "read-only"),
        ({"headers": {"Host": "x"}}, "headers", "set by hookline"),
    ],
)
async def test_create_refuses_bad_fields_naming_them(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    payload: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    response = await client.post("/v1/webhooks", json={**HOOK, **payload}, headers=auth_headers)
    fields = field_errors(response)
    assert field in fields
    assert fragment in fields[field]
    assert (await client.get("/v1/webhooks", headers=auth_headers)).json() == []


async def test_list_and_get_mask_the_secret(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    first = await create(client, account.headers, name="one")
    second = await create(client, account.headers, name="two")
    await create(client, other_account.headers)
    response = await client.get("/v1/webhooks", headers=account.headers)
    assert response.status_code == 200
    listed = response.json()
    assert [w["id"] for w in listed] == [first["id"], second["id"]]
    for shown, created in zip(listed, (first, second), strict=True):
        assert set(shown) == WEBHOOK_KEYS
        assert shown["secret"] == MASKED
        assert shown == {**created, "secret": MASKED}
    fetched = await client.get(f"/v1/webhooks/{first['id']}", headers=account.headers)
    assert fetched.status_code == 200
    assert fetched.json() == {**first, "secret": MASKED}


async def test_patch_changes_fields_and_masks_the_secret(
    client: httpx.AsyncClient, db: Database, auth_headers: dict[str, str]
) -> None:
    hook = await create(client, auth_headers, name="old")
    path = f"/v1/webhooks/{hook['id']}"
    change = {"url": "https://example.org/new", "events": ["call.started"], "is_active": False}
    response = await client.patch(path, json=change, headers=auth_headers)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == WEBHOOK_KEYS
    assert body == {**hook, **change, "secret": MASKED, "updated_at": body["updated_at"]}
    assert body["updated_at"] > hook["updated_at"]
    cleared = (await client.patch(path, json={"name": None}, headers=auth_headers)).json()
    assert cleared["name"] is None
    same = (await client.patch(path, json={"name": None}, headers=auth_headers)).json()
    assert same["updated_at"] == cleared["updated_at"]  # no change, no bump
    assert (await stored(db, hook["id"])).url == "https://example.org/new"


async def test_reactivating_clears_the_disable_reason(
    client: httpx.AsyncClient, db: Database, auth_headers: dict[str, str]
) -> None:
    hook = await create(client, auth_headers)
    async with db.begin() as conn:
        await conn.execute(
            update(webhooks)
            .where(webhooks.c.id == hook["id"])
            .values(is_active=False, disabled_reason="410 Gone", failing_since=utcnow())
        )
    path = f"/v1/webhooks/{hook['id']}"
    shown = (await client.get(path, headers=auth_headers)).json()
    assert shown["disabled_reason"] == "410 Gone" and shown["is_active"] is False
    body = (await client.patch(path, json={"is_active": True}, headers=auth_headers)).json()
    assert body["is_active"] is True and body["disabled_reason"] is None
    assert (await stored(db, hook["id"])).failing_since is None


@pytest.mark.parametrize(
    ("payload", "field", "fragment"),
    [
        ({"url": None}, "url", "cannot be null"),
        ({"events": None}, "events", "cannot be null"),
        ({"is_active": None}, "is_active", "cannot be null"),
        ({"events": ["nope"]}, "events", "unknown event type"),
        ({"url": "gopher://example.com"}, "url", "http or https"),
        ({"secret": "whsec_x"}, "secret", "read-only"),
        ({"created_at": "2020-01-01T00:00:00Z"}, "created_at", "read-only"),
    ],
)
async def test_patch_refuses_bad_changes(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    payload: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    hook = await create(client, auth_headers)
    path = f"/v1/webhooks/{hook['id']}"
    fields = field_errors(await client.patch(path, json=payload, headers=auth_headers))
    assert fragment in fields[field]
    assert (await client.get(path, headers=auth_headers)).json() == {**hook, "secret": MASKED}


async def test_delete_then_gone(client: httpx.AsyncClient, auth_headers: dict[str, str]) -> None:
    hook = await create(client, auth_headers)
    path = f"/v1/webhooks/{hook['id']}"
    response = await client.delete(path, headers=auth_headers)
    assert response.status_code == 200
    assert response.json() == {"success": True, "message": f"Webhook {hook['id']} deleted"}
    assert (await client.get(path, headers=auth_headers)).status_code == 404
    assert (await client.delete(path, headers=auth_headers)).status_code == 404
    assert (await client.get("/v1/webhooks", headers=auth_headers)).json() == []


async def test_rotate_returns_a_new_full_secret_and_keeps_the_old_for_a_day(
    client: httpx.AsyncClient, app: FastAPI, db: Database, auth_headers: dict[str, str]
) -> None:
    hook = await create(client, auth_headers)
    response = await client.post(f"/v1/webhooks/{hook['id']}/rotate-secret", headers=auth_headers)
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["secret", "public_key"]
    assert body["public_key"] is None
    assert_full_secret(body["secret"])
    assert body["secret"] != hook["secret"]
    box: SecretBox = app.state.secret_box
    row = await stored(db, hook["id"])
    assert box.decrypt(row.secret_enc) == body["secret"]
    assert box.decrypt(row.previous_secret_enc) == hook["secret"]
    expected_expiry = parse_iso(hook["created_at"]) + timedelta(hours=24)
    assert timedelta(0) <= row.previous_secret_expires_at - expected_expiry < timedelta(minutes=1)
    shown = (await client.get(f"/v1/webhooks/{hook['id']}", headers=auth_headers)).json()
    assert shown["secret"] == MASKED and shown["updated_at"] > hook["updated_at"]


async def test_the_101st_webhook_is_refused(
    client: httpx.AsyncClient, app: FastAPI, db: Database
) -> None:
    account = await new_account(db, "busy")
    url = await domain.check_url("https://example.com/h", allow_private=True)
    async with db.begin() as conn:  # the first 100 directly: 100 API calls would be slow
        for _ in range(100):
            await domain.create_webhook(
                conn,
                account.id,
                url=url,
                events=["call.started"],
                box=app.state.secret_box,
                max_webhooks=100,
            )
    response = await client.post("/v1/webhooks", json=HOOK, headers=account.headers)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error" and "at most 100 webhooks" in error["message"]
    assert len((await client.get("/v1/webhooks", headers=account.headers)).json()) == 100


async def test_another_accounts_webhook_is_404_everywhere_and_untouched(
    client: httpx.AsyncClient, db: Database, account: Account, other_account: Account
) -> None:
    hook = await create(client, account.headers)
    before = await stored(db, hook["id"])
    path = f"/v1/webhooks/{hook['id']}"
    for response in (
        await client.get(path, headers=other_account.headers),
        await client.patch(path, json={"is_active": False}, headers=other_account.headers),
        await client.post(f"{path}/rotate-secret", headers=other_account.headers),
        await client.delete(path, headers=other_account.headers),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert await stored(db, hook["id"]) == before
    assert (await client.get("/v1/webhooks", headers=other_account.headers)).json() == []


async def test_scopes_are_enforced(client: httpx.AsyncClient, db: Database) -> None:
    reader = await new_account(db, "reader", scopes=["webhooks:read"])
    assert (await client.post("/v1/webhooks", json=HOOK, headers=reader.headers)).status_code == 403
    for method, path in (
        ("PATCH", "/v1/webhooks/wh-x"),
        ("DELETE", "/v1/webhooks/wh-x"),
        ("POST", "/v1/webhooks/wh-x/rotate-secret"),
    ):
        response = await client.request(method, path, json={}, headers=reader.headers)
        assert response.status_code == 403
    assert (await client.get("/v1/webhooks", headers=reader.headers)).status_code == 200
    contacts_only = await new_account(db, "contacts", scopes=["contacts:read"])
    assert (await client.get("/v1/webhooks", headers=contacts_only.headers)).status_code == 403


@pytest.fixture
async def guarded_client(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[httpx.AsyncClient, Account]]:
    """A second app with the SSRF guard on (the shared one allows private targets)."""
    settings = make_settings(
        make_database_url(backend, tmp_path, request), allow_private_targets=False
    )
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        account = await new_account(application.state.db, "guarded")
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as c:
            yield c, account


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1/x", "loopback"),
        ("http://10.0.0.1/", "private"),
        ("http://[::1]:8080/", "loopback"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://0x7f.1/", "loopback"),
        ("http://localhost:9000/", "loopback"),
    ],
)
async def test_private_targets_are_refused_at_create_and_patch(
    guarded_client: tuple[httpx.AsyncClient, Account], url: str, fragment: str
) -> None:
    client, account = guarded_client
    response = await client.post("/v1/webhooks", json={**HOOK, "url": url}, headers=account.headers)
    assert fragment in field_errors(response)["url"]
    assert "HOOKLINE_ALLOW_PRIVATE_TARGETS=true" in field_errors(response)["url"]
    public = await create(client, account.headers, url="https://93.184.215.14/hooks")
    path = f"/v1/webhooks/{public['id']}"
    patched = await client.patch(path, json={"url": url}, headers=account.headers)
    assert fragment in field_errors(patched)["url"]
    assert (await client.get(path, headers=account.headers)).json()["url"] == public["url"]
