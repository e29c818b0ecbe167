"""/v1/events on SQLite and PostgreSQL: the account's events, newest first, for reconciliation."""

from __future__ import annotations

from itertools import combinations

import httpx

from hookline.domain import keys
from hookline.domain.events import READ_SCOPES, record_event
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


async def _one_event_of_each_scope(
    client: httpx.AsyncClient, db: Database, account: Account
) -> dict[str, str]:
    """An event for each read scope, in this order: {type: id}."""
    await client.post("/v1/contacts", json=ADA, headers=account.headers)
    await client.post("/v1/calls", json=CALL, headers=account.headers)
    async with db.begin() as conn:
        await record_event(conn, account.id, "webhook.disabled", {"id": "wh-x"})
    listed = (await client.get("/v1/events", headers=account.headers)).json()
    return {event["type"]: event["id"] for event in reversed(listed)}


SCOPE_OF = {"contact.created": "contacts:read", "call.started": "calls:read"}
SCOPE_OF["webhook.disabled"] = "webhooks:read"


async def test_a_key_reads_the_events_of_its_read_scopes_only(
    client: httpx.AsyncClient, db: Database, account: Account
) -> None:
    events = await _one_event_of_each_scope(client, db, account)
    assert list(events) == ["contact.created", "call.started", "webhook.disabled"]
    for size in (1, 2, 3):
        for scopes in combinations(READ_SCOPES, size):
            async with db.begin() as conn:
                key, _ = await keys.create_key(conn, account.id, "k", [*scopes, "calls:write"])
            headers = {"Authorization": f"Bearer {key}"}
            shown = [i for t, i in reversed(events.items()) if SCOPE_OF[t] in scopes]
            # Filtered in the query: one event a page, and no page short or empty.
            seen, pages = await collect_pages(client, "/v1/events?limit=1", headers)
            assert seen == shown and pages == len(shown), scopes
            for event_type, event_id in events.items():
                got = await client.get(f"/v1/events/{event_id}", headers=headers)
                assert got.status_code == (200 if SCOPE_OF[event_type] in scopes else 404)
                by_type = await client.get(f"/v1/events?type={event_type}", headers=headers)
                if SCOPE_OF[event_type] in scopes:
                    assert [e["id"] for e in by_type.json()] == [event_id]
                else:
                    assert by_type.status_code == 403, by_type.text
                    assert SCOPE_OF[event_type] in by_type.json()["error"]["message"]


async def test_a_key_without_a_read_scope_reads_no_events(
    client: httpx.AsyncClient, db: Database
) -> None:
    writer = await new_account(db, "writer", scopes=["contacts:write", "calls:write"])
    for path in ("/v1/events", "/v1/events/evt_x"):
        response = await client.get(path, headers=writer.headers)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"
        assert "contacts:read" in response.json()["error"]["message"]
