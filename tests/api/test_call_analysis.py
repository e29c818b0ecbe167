"""Call outcomes: ``analysis`` on completion, its events (lead.qualified, appointment.booked) in
the completion's transaction, and the ``assistant_id`` filter; on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.test_calls import complete, start_call
from tests.conftest import Account
from tests.support.api import field_errors

ANALYSIS = {
    "assistant_id": "asst_sales_1",
    "transcript": "Agent: Hello\nCaller: I'd like a demo.\r\n\tThanks",
    "summary": "Wants a demo on Tuesday.",
    "recording_url": "https://recordings.example.com/c/1.mp3?sig=a%20b",
    "intent": "book_demo",
    "lead_qualification": "qualified",
    "appointment_booked": True,
    "cost": "0.42",
}
# The structured outcome's fields, null when the completion carries none.
NO_OUTCOME = {"outcome": None, "outcome_schema_version": None}


async def events_oldest_first(client: httpx.AsyncClient, account: Account) -> list[Any]:
    response = await client.get("/v1/events", headers=account.headers)
    assert response.status_code == 200
    return list(reversed(response.json()))


async def test_analysis_is_stored_returned_and_carried_by_every_event(
    client: httpx.AsyncClient, account: Account
) -> None:
    call = await start_call(client, account.headers)
    response = await complete(client, account.headers, call["id"], analysis=ANALYSIS)
    assert response.status_code == 200, response.text
    completed = response.json()
    assert completed["analysis"] == {**ANALYSIS, **NO_OUTCOME}
    fetched = await client.get(f"/v1/calls/{call['id']}", headers=account.headers)
    assert fetched.json() == completed
    types = [(e["type"], e["data"]) for e in await events_oldest_first(client, account)]
    assert types == [
        ("call.started", call),
        ("call.completed", completed),
        ("lead.qualified", completed),
        ("appointment.booked", completed),
    ]


@pytest.mark.parametrize(
    ("analysis", "fired"),
    [
        ({"lead_qualification": "unqualified", "appointment_booked": False}, []),
        ({"lead_qualification": "unknown"}, []),
        ({"lead_qualification": "qualified"}, ["lead.qualified"]),
        ({"appointment_booked": True}, ["appointment.booked"]),
        ({}, []),
    ],
)
async def test_only_a_qualified_lead_or_a_booked_appointment_fires_its_event(
    client: httpx.AsyncClient, account: Account, analysis: dict[str, Any], fired: list[str]
) -> None:
    call = await start_call(client, account.headers)
    response = await complete(client, account.headers, call["id"], analysis=analysis)
    assert response.status_code == 200, response.text
    # Every field is present, null where it was not reported.
    expected = {**{name: analysis.get(name) for name in ANALYSIS}, **NO_OUTCOME}
    assert response.json()["analysis"] == expected
    types = [e["type"] for e in await events_oldest_first(client, account)]
    assert types == ["call.started", "call.completed", *fired]


async def test_without_analysis_it_is_null_and_only_call_completed_fires(
    client: httpx.AsyncClient, account: Account
) -> None:
    call = await start_call(client, account.headers)
    completed = (await complete(client, account.headers, call["id"])).json()
    assert completed["analysis"] is None
    events = await events_oldest_first(client, account)
    assert [e["type"] for e in events] == ["call.started", "call.completed"]
    assert events[-1]["data"]["analysis"] is None


@pytest.mark.parametrize(
    ("analysis", "field", "fragment"),
    [
        ({"cost": 0.42}, "analysis.cost", "string"),
        ({"cost": "0,42"}, "analysis.cost", "decimal"),
        ({"cost": "-1"}, "analysis.cost", "decimal"),
        ({"cost": "1e3"}, "analysis.cost", "decimal"),
        ({"cost": "NaN"}, "analysis.cost", "decimal"),
        ({"lead_qualification": "hot"}, "analysis.lead_qualification", "qualified"),
        ({"appointment_booked": "yes"}, "analysis.appointment_booked", "bool"),
        ({"appointment_booked": 1}, "analysis.appointment_booked", "bool"),
        ({"transcript": "x" * 50_001}, "analysis.transcript", "50000"),
        ({"summary": "x" * 5_001}, "analysis.summary", "5000"),
        ({"intent": "x" * 201}, "analysis.intent", "200"),
        # Every text field's control characters are refused before the model (by path).
        ({"assistant_id": "a\x00b"}, "analysis", "analysis.assistant_id must not contain control"),
        ({"summary": "bell\x07"}, "analysis", "analysis.summary must not contain control"),
        ({"recording_url": "ftp://x.example/a"}, "analysis.recording_url", "http"),
        ({"recording_url": "https://x.example/a b"}, "analysis.recording_url", "http"),
        ({"recording_url": "https:///nohost"}, "analysis.recording_url", "http"),
        ({"sentiment": "good"}, "analysis.sentiment", "not a known field"),
    ],
)
async def test_bad_analysis_fields_are_named_and_the_call_keeps_running(
    client: httpx.AsyncClient,
    auth_headers: dict[str, str],
    analysis: dict[str, Any],
    field: str,
    fragment: str,
) -> None:
    call = await start_call(client, auth_headers)
    fields = field_errors(await complete(client, auth_headers, call["id"], analysis=analysis))
    assert fragment.lower() in fields[field].lower(), fields
    assert (await client.get(f"/v1/calls/{call['id']}", headers=auth_headers)).json() == call


async def test_analysis_must_be_an_object(
    client: httpx.AsyncClient, auth_headers: dict[str, str]
) -> None:
    call = await start_call(client, auth_headers)
    for bad in ("qualified", [ANALYSIS], 3):
        fields = field_errors(await complete(client, auth_headers, call["id"], analysis=bad))
        assert "analysis" in fields


async def test_list_filters_by_assistant_id(
    client: httpx.AsyncClient, auth_headers: dict[str, str], other_auth_headers: dict[str, str]
) -> None:
    async def completed_with(headers: dict[str, str], assistant: str | None) -> str:
        call = await start_call(client, headers)
        analysis = {"assistant_id": assistant} if assistant else None
        response = await complete(client, headers, call["id"], analysis=analysis)
        assert response.status_code == 200, response.text
        return str(call["id"])

    first = await completed_with(auth_headers, "asst_a")
    await completed_with(auth_headers, "asst_b")
    second = await completed_with(auth_headers, "asst_a")
    await completed_with(auth_headers, None)
    await completed_with(other_auth_headers, "asst_a")  # another account's: never listed

    async def ids(**params: str) -> list[str]:
        response = await client.get("/v1/calls", params=params, headers=auth_headers)
        assert response.status_code == 200, response.text
        return [c["id"] for c in response.json()]

    assert await ids(assistant_id="asst_a") == [second, first]
    assert await ids(assistant_id="asst_a", call_status="failed") == []
    assert await ids(assistant_id="nobody") == []
    response = await client.get(
        "/v1/calls", params={"assistant_id": "x" * 201}, headers=auth_headers
    )
    assert list(field_errors(response)) == ["assistant_id"]
