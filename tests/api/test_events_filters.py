"""GET /v1/events filtered by the object it is about (object_id) and by time (since, until),
on SQLite and PostgreSQL."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from tests.api.test_calls import CALL
from tests.conftest import Account
from tests.support.api import collect_pages, field_errors


async def test_events_filter_by_object_and_time(
    client: httpx.AsyncClient, account: Account
) -> None:
    headers = account.headers
    ada = (
        await client.post(
            "/v1/contacts",
            json={"first_name": "Ada", "phone_number": "+14155552671"},
            headers=headers,
        )
    ).json()
    grace = (
        await client.post(
            "/v1/contacts",
            json={"first_name": "Grace", "phone_number": "+14155552672"},
            headers=headers,
        )
    ).json()
    call = (
        await client.post("/v1/calls", json={**CALL, "contact_id": ada["id"]}, headers=headers)
    ).json()
    await client.patch(f"/v1/contacts/{ada['id']}", json={"notes": "n"}, headers=headers)

    async def listed(query: str) -> list[tuple[str, str]]:
        response = await client.get(f"/v1/events?{query}", headers=headers)
        assert response.status_code == 200, response.text
        return [(e["type"], e["data"]["id"]) for e in response.json()]

    assert await listed(f"object_id={ada['id']}") == [
        ("contact.updated", ada["id"]),
        ("call.started", call["id"]),
        ("contact.created", ada["id"]),
    ]
    assert await listed(f"object_id={call['id']}") == [("call.started", call["id"])]
    assert await listed(f"object_id={grace['id']}&type=contact.created") == [
        ("contact.created", grace["id"])
    ]
    seen, pages = await collect_pages(client, f"/v1/events?object_id={ada['id']}&limit=1", headers)
    assert pages == 3 and len(seen) == 3

    everything = (await client.get("/v1/events", headers=headers)).json()
    [newest, _, second, oldest] = everything
    window = f"since={quote(second['timestamp'])}&until={quote(newest['timestamp'])}"
    within = [e["id"] for e in (await client.get(f"/v1/events?{window}", headers=headers)).json()]
    assert oldest["id"] not in within and second["id"] in within
    later = f"since={quote(newest['timestamp'])}&object_id={grace['id']}"
    assert await listed(later) == []


async def test_events_filters_refuse_bad_input(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    for query, field in (
        ("object_id=a%20b", "object_id"),
        ("object_id=" + "x" * 101, "object_id"),
        ("since=yesterday", "since"),
        ("since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", "until"),
        ("until=10000-01-01T00:00:00Z", "until"),
    ):
        response = await client.get(f"/v1/events?{query}", headers=auth_headers)
        assert response.status_code == 422, (query, response.text)
        assert field in field_errors(response), query
