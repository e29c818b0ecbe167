"""/v1/events on SQLite and PostgreSQL: the account's events, newest first, for reconciliation."""

from __future__ import annotations

import httpx

from hookline.storage.db import Database
from tests.api.test_calls import CALL
from tests.conftest import Account, new_account
from tests.support.api import collect_pages, field_errors

EVENT_KEYS = {"id", "type", "timestamp", "data", "previous_attributes"}
ADA = {"first_name": "Ada", "phone_number": "+14155552671"}


async def test_events_list_newest_first_with_every_field(
    client: httpx.AsyncClient, account: Account
) -> None:
    headers = account.headers
    contact = (await client.post("/v1/contacts", json=ADA, headers=headers)).json()
    path = f"/v1/contacts/{contact['id']}"
    updated = (await client.patch(path, json={"company": "AE"}, headers=headers)).json()
    call = (await client.post("/v1/calls", json=CALL, headers=headers)).json()
    response = await client.get("/v1/events", headers=headers)
    assert response.status_code == 200
    listed = response.json()
    for event in listed:
        assert set(event) == EVENT_KEYS
        assert event["id"].startswith("evt_")
        assert event["timestamp"].endswith("Z") and len(event["timestamp"]) == 24
    assert [(e["type"], e["data"], e["previous_attributes"]) for e in listed] == [
        ("call.started", call, None),
        ("contact.updated", updated, {"company": None}),
        ("contact.created", contact, None),
    ]
    for event in listed:
        fetched = await client.get(f"/v1/events/{event['id']}", headers=headers)
        assert fetched.status_code == 200 and fetched.json() == event


async def test_events_filter_by_type(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    await client.post("/v1/contacts", json=ADA, headers=auth_headers)
    await client.post("/v1/calls", json=CALL, headers=auth_headers)
    response = await client.get("/v1/events?type=call.started", headers=auth_headers)
    assert [e["type"] for e in response.json()] == ["call.started"]
    none = await client.get("/v1/events?type=call.completed", headers=auth_headers)
    assert none.json() == []
    bad = await client.get("/v1/events?type=call.exploded", headers=auth_headers)
    assert "call.completed" in field_errors(bad)["type"]


async def test_events_paginate_with_link(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    created = [
        (await client.post("/v1/calls", json=CALL, headers=auth_headers)).json()["id"]
        for _ in range(5)
    ]
    seen, pages = await collect_pages(client, "/v1/events?limit=2", auth_headers)
    assert pages == 3 and len(seen) == 5
    everything = (await client.get("/v1/events", headers=auth_headers)).json()
    assert seen == [e["id"] for e in everything]
    assert [e["data"]["id"] for e in everything] == list(reversed(created))
    for bad in ("limit=0", "limit=101", "cursor=%%"):
        response = await client.get(f"/v1/events?{bad}", headers=auth_headers)
        assert response.status_code == 422


async def test_another_accounts_event_is_404(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    await client.post("/v1/contacts", json=ADA, headers=account.headers)
    [event] = (await client.get("/v1/events", headers=account.headers)).json()
    response = await client.get(f"/v1/events/{event['id']}", headers=other_account.headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert (await client.get("/v1/events", headers=other_account.headers)).json() == []
    unknown = await client.get("/v1/events/evt_nope", headers=account.headers)
    assert unknown.status_code == 404


async def test_events_need_contacts_read(client: httpx.AsyncClient, db: Database) -> None:
    calls_only = await new_account(db, "calls", scopes=["calls:read", "webhooks:read"])
    for path in ("/v1/events", "/v1/events/evt_x"):
        response = await client.get(path, headers=calls_only.headers)
        assert response.status_code == 403
        assert "contacts:read" in response.json()["error"]["message"]
    reader = await new_account(db, "reader", scopes=["contacts:read"])
    assert (await client.get("/v1/events", headers=reader.headers)).status_code == 200
