"""/v1/calls on SQLite and PostgreSQL: shapes, contact linking, completion, events, isolation."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from hookline.domain.calls import MAX_CALL_DURATION
from hookline.domain.events import list_events
from hookline.storage.db import Database
from hookline.timeutil import iso, parse_iso, utcnow
from tests.conftest import Account, new_account
from tests.support.api import collect_pages, field_errors

CALL_KEYS = {
    "id",
    "contact_id",
    "call_type",
    "customer_phone_number",
    "call_status",
    "call_started_at",
    "call_ended_at",
    "duration_seconds",
    "metadata",
    "analysis",
    "created_at",
    "updated_at",
}
CALL = {"call_type": "inbound", "customer_phone_number": "+14155552671"}
STARTED = "2026-01-01T10:00:00.000Z"


async def start_call(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> Any:
    response = await client.post("/v1/calls", json={**CALL, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


async def complete(
    client: httpx.AsyncClient, headers: dict[str, str], call_id: str, **fields: Any
) -> httpx.Response:
    body = {"call_status": "completed", **fields}
    return await client.post(f"/v1/calls/{call_id}/complete", json=body, headers=headers)


async def test_start_returns_every_field(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    response = await client.post("/v1/calls", json=CALL, headers=auth_headers)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == CALL_KEYS
    assert body["id"].startswith("call-")
    assert response.headers["location"] == f"/v1/calls/{body['id']}"
    assert body["call_status"] == "in-progress"
    assert body["call_type"] == "inbound"
    assert body["contact_id"] is None
    assert body["call_ended_at"] is None and body["duration_seconds"] is None
    assert body["metadata"] is None and body["analysis"] is None
    # call_started_at defaults to now, i.e. the moment the row was written.
    assert body["call_started_at"] == body["created_at"] == body["updated_at"]
    assert body["created_at"].endswith("Z") and len(body["created_at"]) == 24
    fetched = await client.get(f"/v1/calls/{body['id']}", headers=auth_headers)
    assert fetched.status_code == 200 and fetched.json() == body


async def test_start_keeps_given_fields_normalised(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    metadata = {"agent": "ivr-2", "queue": {"name": "sales", "wait": 12.5}, "tags": [1, None]}
    body = await start_call(
        client,
        auth_headers,
        call_type="outbound",
        customer_phone_number="+44 20 7946 0958",
        call_started_at="2026-01-01T11:00:00.123456+01:00",
        metadata=metadata,
    )
    assert body["call_type"] == "outbound"
    assert body["customer_phone_number"] == "+442079460958"
    assert body["call_started_at"] == "2026-01-01T10:00:00.123Z"
    assert body["metadata"] == metadata


async def test_start_and_complete_fire_events_carrying_the_call(
    client: httpx.AsyncClient, account: Account
) -> None:
    started = await start_call(client, account.headers)
    completed = (await complete(client, account.headers, started["id"])).json()
    response = await client.get("/v1/events", headers=account.headers)
    assert response.status_code == 200
    newest_first = [(e["type"], e["data"]) for e in response.json()]
    assert newest_first == [("call.completed", completed), ("call.started", started)]


async def test_call_links_to_the_contact_with_that_phone_number(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    contact = {"first_name": "Ada", "phone_number": "+14155552671"}
    theirs = await client.post("/v1/contacts", json=contact, headers=other_account.headers)
    assert theirs.status_code == 201
    assert (await start_call(client, account.headers))["contact_id"] is None

    ours = (await client.post("/v1/contacts", json=contact, headers=account.headers)).json()
    linked = await start_call(client, account.headers, customer_phone_number="+1 (415) 555-2671")
    assert linked["contact_id"] == ours["id"]
    unrelated = await start_call(client, account.headers, customer_phone_number="+12025550143")
    assert unrelated["contact_id"] is None


async def test_explicit_contact_id_must_be_the_accounts(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    contact = {"first_name": "Grace", "phone_number": "+12025550143"}
    ours = (await client.post("/v1/contacts", json=contact, headers=account.headers)).json()
    theirs = (await client.post("/v1/contacts", json=contact, headers=other_account.headers)).json()
    body = await start_call(client, account.headers, contact_id=ours["id"])
    assert body["contact_id"] == ours["id"]  # explicit wins over the phone number look-up
    for foreign in (theirs["id"], "00000000-0000-7000-8000-000000000000"):
        response = await client.post(
            "/v1/calls", json={**CALL, "contact_id": foreign}, headers=account.headers
        )
        assert field_errors(response) == {"contact_id": "contact_id does not match a contact"}


@pytest.mark.parametrize(
    ("payload", "field", "fragment"),
    [
        ({"call_type": "sideways"}, "call_type", "'inbound' or 'outbound'"),
        ({"customer_phone_number": "4155552671"}, "customer_phone_number", "E.164"),
        ({"customer_phone_number": "+1"}, "customer_phone_number", "E.164"),
        ({"call_started_at": "yesterday"}, "call_started_at", "datetime"),
        ({"call_started_at": "2026-01-01T10:00:00"}, "call_started_at", "timezone"),
        ({"metadata": ["not", "an", "object"]}, "metadata", "dictionary"),
        ({"metadata": {"blob": "x" * 17_000}}, "metadata", "at most 16 KiB"),
        ({"metadata": {"n": 2**70}}, "metadata", "cannot represent"),
        ({"contact_id": "x" * 65}, "contact_id", "at most 64"),
        ({"call_status": "completed"}, "call_status", "read-only"),
        ({"duration_seconds": 3}, "duration_seconds", "read-only"),
        ({"id": "call-mine"}, "id", "read-only"),
        ({"direction": "in"}, "direction", "not a known field"),
    ],
)
async def test_start_refuses_bad_fields_naming_them(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    payload: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    response = await client.post("/v1/calls", json={**CALL, **payload}, headers=auth_headers)
    fields = field_errors(response)
    assert field in fields
    assert fragment in fields[field]


async def test_missing_required_fields_are_each_named(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    fields = field_errors(await client.post("/v1/calls", json={}, headers=auth_headers))
    assert fields == {
        "call_type": "call_type is required",
        "customer_phone_number": "customer_phone_number is required",
    }


async def test_complete_sets_status_end_and_whole_second_duration(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    call = await start_call(client, auth_headers, call_started_at=STARTED)
    response = await complete(
        client,
        auth_headers,
        call["id"],
        call_status="no-answer",
        call_ended_at="2026-01-01T10:01:05.999Z",
    )
    assert response.status_code == 200
    body = response.json()
    assert set(body) == CALL_KEYS
    assert body["call_status"] == "no-answer"
    assert body["call_ended_at"] == "2026-01-01T10:01:05.999Z"
    assert body["duration_seconds"] == 65  # rounded down, not to the nearest
    assert body["updated_at"] >= body["created_at"]
    assert {k: body[k] for k in ("id", "call_started_at", "created_at")} == {
        k: call[k] for k in ("id", "call_started_at", "created_at")
    }
    assert (await client.get(f"/v1/calls/{call['id']}", headers=auth_headers)).json() == body


async def test_complete_defaults_the_end_to_now(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    call = await start_call(
        client, auth_headers, call_started_at=iso(utcnow() - timedelta(hours=1))
    )
    body = (await complete(client, auth_headers, call["id"], call_status="busy")).json()
    assert body["call_status"] == "busy"
    assert body["call_ended_at"] == body["updated_at"]
    assert body["duration_seconds"] > 0


async def test_a_call_ends_at_most_its_maximum_length_after_its_start(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    """``duration_seconds`` stays a sane length that fits the column on every database."""
    longest = iso(parse_iso(STARTED) + MAX_CALL_DURATION)
    call = await start_call(client, auth_headers, call_started_at=STARTED)
    body = (await complete(client, auth_headers, call["id"], call_ended_at=longest)).json()
    assert body["duration_seconds"] == MAX_CALL_DURATION.total_seconds()

    too_long = iso(parse_iso(STARTED) + MAX_CALL_DURATION + timedelta(milliseconds=1))
    stale = iso(utcnow() - MAX_CALL_DURATION - timedelta(hours=1))
    cases: list[tuple[str | None, dict[str, str | None]]] = [
        (STARTED, {"call_ended_at": too_long}),
        (STARTED, {"call_ended_at": "9998-12-31T23:59:59Z"}),
        (stale, {}),  # the default end, now
    ]
    for started, ended in cases:
        call = await start_call(client, auth_headers, call_started_at=started)
        fields = field_errors(await complete(client, auth_headers, call["id"], **ended))
        assert "at most 7 days after call_started_at" in fields["call_ended_at"]
        assert (await client.get(f"/v1/calls/{call['id']}", headers=auth_headers)).json() == call


async def test_completing_twice_is_a_conflict_and_changes_nothing(
    client: httpx.AsyncClient, account: Account
) -> None:
    call = await start_call(client, account.headers)
    first = (await complete(client, account.headers, call["id"])).json()
    again = await complete(client, account.headers, call["id"], call_status="failed")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"
    assert (await client.get(f"/v1/calls/{call['id']}", headers=account.headers)).json() == first
    types = [e["type"] for e in (await client.get("/v1/events", headers=account.headers)).json()]
    assert types == ["call.completed", "call.started"]


@pytest.mark.parametrize(
    ("payload", "field", "fragment"),
    [
        ({"call_status": "in-progress"}, "call_status", "'completed'"),
        ({"call_status": None}, "call_status", "'completed'"),
        ({"call_ended_at": "2026-01-01T09:59:59.999Z"}, "call_ended_at", "not be before"),
        ({"call_ended_at": "2026-01-01T10:00:00"}, "call_ended_at", "timezone"),
        ({"duration_seconds": 5}, "duration_seconds", "read-only"),
    ],
)
async def test_complete_refuses_bad_fields_and_leaves_the_call_running(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    payload: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    call = await start_call(client, auth_headers, call_started_at=STARTED)
    fields = field_errors(await complete(client, auth_headers, call["id"], **payload))
    assert fragment in fields[field]
    assert (await client.get(f"/v1/calls/{call['id']}", headers=auth_headers)).json() == call


async def test_list_filters(client: httpx.AsyncClient, auth_headers: dict[str, str]) -> None:
    contact = {"first_name": "Ada", "phone_number": "+14155552671"}
    ada = (await client.post("/v1/contacts", json=contact, headers=auth_headers)).json()
    linked = await start_call(client, auth_headers)
    outbound = await start_call(
        client, auth_headers, call_type="outbound", customer_phone_number="+12025550143"
    )
    failed = await start_call(client, auth_headers, customer_phone_number="+12025550143")
    await complete(client, auth_headers, failed["id"], call_status="failed")

    async def ids(**params: str) -> list[str]:
        response = await client.get("/v1/calls", params=params, headers=auth_headers)
        assert response.status_code == 200, response.text
        return [c["id"] for c in response.json()]

    assert await ids() == [failed["id"], outbound["id"], linked["id"]]
    assert await ids(contact_id=ada["id"]) == [linked["id"]]
    assert await ids(call_type="outbound") == [outbound["id"]]
    assert await ids(call_status="failed") == [failed["id"]]
    assert await ids(call_status="in-progress", call_type="inbound") == [linked["id"]]
    assert await ids(call_status="completed") == []
    for bad in ({"call_status": "done"}, {"call_type": "x"}, {"limit": "0"}, {"cursor": "%%"}):
        response = await client.get("/v1/calls", params=bad, headers=auth_headers)
        assert list(field_errors(response)) == list(bad)


async def test_list_paginates_with_link(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    created = [(await start_call(client, auth_headers))["id"] for _ in range(5)]
    seen, pages = await collect_pages(client, "/v1/calls?limit=2&call_type=inbound", auth_headers)
    assert seen == list(reversed(created))
    assert pages == 3


async def test_another_accounts_call_is_404_everywhere_and_untouched(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    call = await start_call(client, account.headers)
    path = f"/v1/calls/{call['id']}"
    for response in (
        await client.get(path, headers=other_account.headers),
        await complete(client, other_account.headers, call["id"]),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert (await client.get("/v1/calls", headers=other_account.headers)).json() == []
    assert (await client.get(path, headers=account.headers)).json() == call
    assert (await complete(client, account.headers, "call-nope")).status_code == 404


async def test_scopes_are_enforced(client: httpx.AsyncClient, db: Database) -> None:
    reader = await new_account(db, "reader", scopes=["calls:read"])
    denied = await client.post("/v1/calls", json=CALL, headers=reader.headers)
    assert denied.status_code == 403
    assert (await complete(client, reader.headers, "call-x")).status_code == 403
    assert (await client.get("/v1/calls", headers=reader.headers)).status_code == 200
    contacts_only = await new_account(db, "contacts", scopes=["contacts:read", "contacts:write"])
    assert (await client.get("/v1/calls", headers=contacts_only.headers)).status_code == 403
    async with db.read() as conn:
        assert await list_events(conn, reader.id, limit=10) == []
