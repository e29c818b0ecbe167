"""/v1/contacts on SQLite and PostgreSQL: the spec's shapes, the contract's rules, the outbox."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from hookline.domain import contacts as contacts_domain
from hookline.domain import events as events_domain
from hookline.domain.events import list_events
from hookline.storage.db import Database
from tests.conftest import Account, new_account
from tests.support.api import collect_pages, field_errors

CONTACT_KEYS = {
    "id",
    "first_name",
    "last_name",
    "phone_number",
    "email",
    "company",
    "tags",
    "notes",
    "do_not_call",
    "do_not_call_reason",
    "created_at",
    "updated_at",
}
ADA = {"first_name": "Ada", "phone_number": "+14155552671"}


async def create(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> Any:
    response = await client.post("/v1/contacts", json={**ADA, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


async def account_events(db: Database, account_id: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        return list(reversed(await list_events(conn, account_id, limit=100)))


async def test_create_returns_every_field_with_defaults(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    response = await client.post("/v1/contacts", json=ADA, headers=auth_headers)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == CONTACT_KEYS
    assert body["tags"] == []
    assert body["last_name"] is None and body["email"] is None and body["notes"] is None
    assert body["updated_at"] == body["created_at"]
    assert body["created_at"].endswith("Z") and len(body["created_at"]) == 24
    assert response.headers["location"] == f"/v1/contacts/{body['id']}"
    assert response.headers["x-request-id"]


async def test_create_normalises_fields(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    body = await create(
        client,
        auth_headers,
        first_name="  Ada ",
        last_name="Lovelace",
        phone_number="+44 20 7946 0958",
        email="Ada@Example.COM",
        company="Analytical Engines",
        tags=[" vip", "vip", "lead ", "vip "],
        notes="met at the exhibition",
    )
    assert body["first_name"] == "Ada"
    assert body["phone_number"] == "+442079460958"
    assert body["email"] == "Ada@example.com"
    assert body["tags"] == ["vip", "lead"]
    assert body["notes"] == "met at the exhibition"


async def test_create_fires_contact_created_in_the_same_transaction(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    body = await create(client, account.headers)
    [event] = await account_events(db, account.id)
    assert event["type"] == "contact.created"
    assert event["data"] == body
    assert event["id"].startswith("evt_")


@pytest.mark.parametrize(
    ("payload", "field", "fragment"),
    [
        ({"phone_number": "4155552671"}, "phone_number", "E.164, e.g. +15551234567"),
        ({"phone_number": "+1"}, "phone_number", "E.164"),
        ({"phone_number": "+1415555267100000"}, "phone_number", "possible"),
        ({"phone_number": 14155552671}, "phone_number", "string"),
        ({"first_name": "   "}, "first_name", "must not be empty"),
        ({"first_name": "x" * 101}, "first_name", "at most 100"),
        ({"last_name": "x" * 101}, "last_name", "at most 100"),
        ({"company": "x" * 201}, "company", "at most 200"),
        ({"notes": "x" * 10_001}, "notes", "at most 10000"),
        ({"email": "not-an-email"}, "email", "not a valid email"),
        ({"tags": ["ok", ""]}, "tags", "1 to 64"),
        ({"tags": [f"t{i}" for i in range(51)]}, "tags", "at most 50"),
        ({"tags": "vip"}, "tags", "list"),
        ({"id": "mine"}, "id", "read-only"),
        ({"created_at": "2020-01-01T00:00:00Z"}, "created_at", "read-only"),
        ({"favourite_colour": "blue"}, "favourite_colour", "not a known field"),
    ],
)
async def test_create_refuses_bad_fields_naming_them(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    payload: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    response = await client.post("/v1/contacts", json={**ADA, **payload}, headers=auth_headers)
    fields = field_errors(response)
    assert field in fields
    assert fragment in fields[field]
    assert response.json()["error"]["request_id"] == response.headers["x-request-id"]


async def test_missing_required_fields_are_each_named(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    response = await client.post("/v1/contacts", json={}, headers=auth_headers)
    assert set(field_errors(response)) == {"first_name", "phone_number"}


@pytest.mark.parametrize(
    ("content", "content_type", "status", "code"),
    [
        (b"{not json", "application/json", 400, "invalid_json"),
        (b"[1, 2]", "application/json", 400, "invalid_json"),
        (b"", "application/json", 400, "invalid_json"),
        (b'{"first_name": "Ada"}', "text/plain", 415, "unsupported_media_type"),
        (b"first_name=Ada", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    ],
)
async def test_malformed_bodies_get_the_contract_error(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    content: bytes,
    content_type: str,
    status: int,
    code: str,
) -> None:
    response = await client.post(
        "/v1/contacts",
        content=content,
        headers={**auth_headers, "content-type": content_type},
    )
    assert response.status_code == status
    body = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == code


async def test_body_over_64_kib_is_refused(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    response = await client.post(
        "/v1/contacts", json={**ADA, "notes": "x" * 70_000}, headers=auth_headers
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


async def test_get_returns_the_created_contact(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    created = await create(client, auth_headers, tags=["a"])
    response = await client.get(f"/v1/contacts/{created['id']}", headers=auth_headers)
    assert response.status_code == 200
    assert response.json() == created


async def test_unknown_id_is_404_in_the_contract_shape(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    response = await client.get("/v1/contacts/does-not-exist", headers=auth_headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_list_filters(client: httpx.AsyncClient, auth_headers: dict[str, str]) -> None:
    ada = await create(
        client, auth_headers, last_name="Lovelace", email="ada@example.com", tags=["vip", "lead"]
    )
    grace = await create(
        client,
        auth_headers,
        first_name="Grace",
        last_name="Hopper",
        phone_number="+12025550143",
        tags=["vip"],
    )

    async def ids(**params: str) -> list[str]:
        response = await client.get("/v1/contacts", params=params, headers=auth_headers)
        assert response.status_code == 200, response.text
        return [c["id"] for c in response.json()]

    assert await ids() == [grace["id"], ada["id"]]  # newest first
    assert await ids(search="love") == [ada["id"]]
    assert await ids(search="GRACE HOP") == [grace["id"]]
    assert await ids(search="ada@example") == [ada["id"]]
    assert await ids(search="%") == []
    assert await ids(tags="vip") == [grace["id"], ada["id"]]
    assert await ids(tags="vip,lead") == [ada["id"]]
    assert await ids(phone_number="+1 202 555 0143") == [grace["id"]]
    assert await ids(email="ADA@example.com") == [ada["id"]]


async def test_list_paginates_with_link_cursor_and_offset(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    created = [await create(client, auth_headers, first_name=f"n{i}") for i in range(5)]
    newest_first = [c["id"] for c in reversed(created)]
    seen, pages = await collect_pages(client, "/v1/contacts?limit=2", auth_headers)
    assert seen == newest_first
    assert pages == 3
    response = await client.get("/v1/contacts?limit=2&offset=3", headers=auth_headers)
    assert [c["id"] for c in response.json()] == newest_first[3:5]


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "cursor=%%%", "offset=-1"])
async def test_list_refuses_bad_paging(
    client: httpx.AsyncClient, auth_headers: dict[str, str], query: str
) -> None:
    response = await client.get(f"/v1/contacts?{query}", headers=auth_headers)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


async def test_patch_is_a_merge_patch_and_fires_contact_updated(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    created = await create(client, account.headers, company="ACME", email="a@example.com")
    response = await client.patch(
        f"/v1/contacts/{created['id']}",
        json={"company": None, "last_name": "Lovelace"},
        headers=account.headers,
    )
    assert response.status_code == 200
    updated = response.json()
    assert updated["company"] is None
    assert updated["last_name"] == "Lovelace"
    assert updated["email"] == "a@example.com"  # absent fields are kept
    assert updated["updated_at"] > created["updated_at"]
    assert updated["created_at"] == created["created_at"]
    stored = (await client.get(f"/v1/contacts/{created['id']}", headers=account.headers)).json()
    assert stored == updated
    [_, event] = await account_events(db, account.id)
    assert event["type"] == "contact.updated"
    assert event["data"] == updated
    assert event["previous_attributes"] == {"company": "ACME", "last_name": None}


async def test_patch_without_a_change_fires_nothing(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    created = await create(client, account.headers, tags=["a"])
    response = await client.patch(
        f"/v1/contacts/{created['id']}",
        json={"first_name": "Ada", "tags": ["a", " a"]},
        headers=account.headers,
    )
    assert response.status_code == 200
    assert response.json() == created
    assert [e["type"] for e in await account_events(db, account.id)] == ["contact.created"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"first_name": None}, "first_name"),
        ({"phone_number": None}, "phone_number"),
        ({"phone_number": "12"}, "phone_number"),
        ({"id": "x"}, "id"),
        ({"updated_at": "2020-01-01T00:00:00Z"}, "updated_at"),
    ],
)
async def test_patch_refuses_bad_changes(
    client: httpx.AsyncClient, auth_headers: dict[str, str], payload: dict[str, Any], field: str
) -> None:
    created = await create(client, auth_headers)
    response = await client.patch(
        f"/v1/contacts/{created['id']}", json=payload, headers=auth_headers
    )
    assert field in field_errors(response)
    after = await client.get(f"/v1/contacts/{created['id']}", headers=auth_headers)
    assert after.json() == created


async def test_patch_tags_null_clears_them(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    created = await create(client, auth_headers, tags=["a"])
    response = await client.patch(
        f"/v1/contacts/{created['id']}", json={"tags": None}, headers=auth_headers
    )
    assert response.json()["tags"] == []


async def test_delete_then_gone(client: httpx.AsyncClient, db: Database, account: Account) -> None:
    created = await create(client, account.headers)
    response = await client.delete(f"/v1/contacts/{created['id']}", headers=account.headers)
    assert response.status_code == 200
    assert response.json() == {"success": True, "message": f"Contact {created['id']} deleted"}
    again = await client.delete(f"/v1/contacts/{created['id']}", headers=account.headers)
    assert again.status_code == 404
    gone = await client.get(f"/v1/contacts/{created['id']}", headers=account.headers)
    assert gone.status_code == 404
    types = [e["type"] for e in await account_events(db, account.id)]
    assert types == ["contact.created", "contact.deleted"]


async def test_a_crash_between_the_contact_and_its_event_keeps_neither(
    app: FastAPI, db: Database, account: Account, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outbox guarantee: the contact INSERT succeeds and the event INSERT fails in the
    database (a foreign key to no account). On SQLite the two run one after the other and the
    unit's savepoint takes both back; on PostgreSQL they are one statement, which fails whole."""

    def orphan_event(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**events_domain.event_row(*args, **kwargs), "account_id": "account-missing"}

    monkeypatch.setattr(contacts_domain, "event_row", orphan_event)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as client:
        response = await client.post("/v1/contacts", json=ADA, headers=account.headers)
        assert response.status_code == 500
        monkeypatch.undo()
        listed = await client.get("/v1/contacts", headers=account.headers)
    assert listed.json() == []
    assert await account_events(db, account.id) == []


async def test_scopes_are_enforced(client: httpx.AsyncClient, db: Database) -> None:
    reader = await new_account(db, "reader", scopes=["contacts:read"])
    denied = await client.post("/v1/contacts", json=ADA, headers=reader.headers)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "forbidden"
    allowed = await client.get("/v1/contacts", headers=reader.headers)
    assert allowed.status_code == 200
