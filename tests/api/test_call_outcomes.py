"""An account's call outcome: its JSON Schema (a bounded subset, versioned), outcomes validated
against it on completion or by ``POST /v1/calls/{id}/analysis``, ``call.analyzed`` after
``call.completed`` in the same transaction, the account's event catalogue and CEL filters;
on SQLite and PostgreSQL, with real receivers."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest
from fastapi import FastAPI

from hookline.storage.db import Database
from tests.api.test_call_analysis import events_oldest_first
from tests.api.test_calls import complete, start_call
from tests.conftest import Account, new_account
from tests.support.api import field_errors
from tests.support.receiver import Receiver

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "budget": {"type": "integer", "minimum": 0, "description": "In dollars."},
        "decision_maker": {"type": "boolean"},
        "stage": {"type": "string", "enum": ["new", "demo", "won"]},
        "contact": {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 20}},
            "required": ["name"],
        },
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 3},
    },
    "required": ["budget"],
    "additionalProperties": False,
}
OUTCOME = {"budget": 5000, "decision_maker": True, "contact": {"name": "Ada"}, "tags": ["x"]}


async def put_schema(client: httpx.AsyncClient, account: Account, schema: Any) -> httpx.Response:
    return await client.put("/v1/call-analysis-schema", json=schema, headers=account.headers)


async def ended_call(client: httpx.AsyncClient, account: Account) -> Any:
    call = await start_call(client, account.headers)
    response = await complete(client, account.headers, call["id"])
    assert response.status_code == 200, response.text
    return response.json()


async def analyse(
    client: httpx.AsyncClient, account: Account, call_id: str, outcome: Any
) -> httpx.Response:
    return await client.post(f"/v1/calls/{call_id}/analysis", json=outcome, headers=account.headers)


async def test_schemas_are_versioned_and_old_versions_stay_readable(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    none = (await client.get("/v1/call-analysis-schema", headers=account.headers)).json()
    assert none == {"version": None, "schema": None, "created_at": None}
    first = await put_schema(client, account, SCHEMA)
    assert first.status_code == 200, first.text
    assert (first.json()["version"], first.json()["schema"]) == (1, SCHEMA)
    second = {"type": "object", "properties": {"score": {"type": "number"}}}
    assert (await put_schema(client, account, second)).json()["version"] == 2
    current = await client.get("/v1/call-analysis-schema", headers=account.headers)
    assert (current.json()["version"], current.json()["schema"]) == (2, second)
    old = await client.get("/v1/call-analysis-schema?version=1", headers=account.headers)
    assert old.json()["schema"] == SCHEMA
    missing = await client.get("/v1/call-analysis-schema?version=3", headers=account.headers)
    assert missing.status_code == 404
    theirs = await client.get("/v1/call-analysis-schema", headers=other_account.headers)
    assert theirs.json()["version"] is None


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return node


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"type": "object", "$ref": "#/x"}, "$ref"),
        (
            {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}},
            "properties.e.format",
        ),
        (
            {"type": "object", "properties": {"e": {"type": "string", "pattern": "^a"}}},
            "properties.e.pattern",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "number", "minLength": 1}}},
            "properties.n.minLength",
        ),
        ({"type": "object", "properties": {"n": {"type": "null"}}}, "properties.n.type"),
        (
            {"type": "object", "properties": {"n": {"type": ["string", "null"]}}},
            "properties.n.type",
        ),
        ({"type": "object", "properties": {"n": {"enum": [1]}}}, "properties.n.type"),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "enum": ["a"]}}},
            "properties.n.enum",
        ),
        ({"type": "object", "properties": {"a-b": {"type": "string"}}}, "properties.a-b"),
        (
            {"type": "object", "properties": {"n": {"type": "integer", "maximum": "9"}}},
            "properties.n.maximum",
        ),
        (
            {"type": "object", "properties": {"s": {"type": "string", "maxLength": -1}}},
            "properties.s.maxLength",
        ),
        ({"type": "object", "required": ["nope"]}, "required"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "additionalProperties"),
        ({"type": "array", "items": {"type": "string"}}, "type"),
        ({"properties": {}}, "type"),
        (_deep(7), "properties.a.properties.a.properties.a.properties.a.properties.a.properties.a"),
        (
            {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(101)}},
            "properties.p100",
        ),
        ({"type": "object", "description": "x" * 17_000}, "schema"),
    ],
)
async def test_a_schema_outside_the_subset_is_refused_naming_the_keyword(
    client: httpx.AsyncClient, account: Account, schema: dict[str, Any], field: str
) -> None:
    response = await put_schema(client, account, schema)
    assert response.status_code == 422, response.text
    assert field in field_errors(response), field_errors(response)
    current = (await client.get("/v1/call-analysis-schema", headers=account.headers)).json()
    assert current["version"] is None


@pytest.mark.parametrize("body", [[SCHEMA], "object", {"type": "object", "description": "a\x00"}])
async def test_a_schema_body_that_is_no_storable_object_is_refused(
    client: httpx.AsyncClient, account: Account, body: Any
) -> None:
    assert (await put_schema(client, account, body)).status_code in (400, 422)


async def test_an_outcome_on_completion_is_validated_and_fires_call_analyzed_after(
    client: httpx.AsyncClient, account: Account
) -> None:
    await put_schema(client, account, SCHEMA)
    call = await start_call(client, account.headers)
    bad = {"budget": -1, "contact": {}, "tags": ["", "a", "b", "c"], "extra": 1}
    refused = await complete(client, account.headers, call["id"], analysis={"outcome": bad})
    assert refused.status_code == 422
    assert {
        "analysis.outcome.budget",
        "analysis.outcome.contact.name",
        "analysis.outcome.tags",
        "analysis.outcome.tags.0",
        "analysis.outcome",
    } <= set(field_errors(refused))
    ok = await complete(client, account.headers, call["id"], analysis={"outcome": OUTCOME})
    assert ok.status_code == 200, ok.text
    analysis = ok.json()["analysis"]
    assert (analysis["outcome"], analysis["outcome_schema_version"]) == (OUTCOME, 1)
    types = [e["type"] for e in await events_oldest_first(client, account)]
    assert types == ["call.started", "call.completed", "call.analyzed"]


async def test_a_later_analysis_is_validated_recorded_once_and_fires_call_analyzed(
    client: httpx.AsyncClient, account: Account
) -> None:
    await put_schema(client, account, SCHEMA)
    call = await start_call(client, account.headers)
    in_progress = await analyse(client, account, call["id"], OUTCOME)
    assert in_progress.status_code == 409
    completed = (await complete(client, account.headers, call["id"])).json()
    missing = await analyse(client, account, call["id"], {"decision_maker": "yes"})
    assert missing.status_code == 422
    assert {"budget", "decision_maker"} <= set(field_errors(missing))
    response = await analyse(client, account, call["id"], OUTCOME)
    assert response.status_code == 200, response.text
    analysed = response.json()
    assert analysed["analysis"]["outcome"] == OUTCOME
    assert analysed["analysis"]["outcome_schema_version"] == 1
    assert analysed["call_status"] == completed["call_status"]
    again = await analyse(client, account, call["id"], OUTCOME)
    assert again.status_code == 409
    events = await events_oldest_first(client, account)
    assert [e["type"] for e in events] == ["call.started", "call.completed", "call.analyzed"]
    assert events[-1]["data"] == analysed


async def test_without_a_schema_any_object_is_an_outcome_of_version_null(
    client: httpx.AsyncClient, account: Account
) -> None:
    call = await ended_call(client, account)
    response = await analyse(client, account, call["id"], {"anything": [1, {"a": None}]})
    assert response.status_code == 200, response.text
    assert response.json()["analysis"]["outcome_schema_version"] is None
    for bad in ([1], "x", 3):
        other = await ended_call(client, account)
        assert (await analyse(client, account, other["id"], bad)).status_code in (400, 422)


async def test_a_new_schema_version_never_touches_stored_outcomes(
    client: httpx.AsyncClient, account: Account
) -> None:
    await put_schema(client, account, SCHEMA)
    call = await ended_call(client, account)
    stored = (await analyse(client, account, call["id"], OUTCOME)).json()
    strict = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}
    assert (await put_schema(client, account, strict)).json()["version"] == 2
    fetched = (await client.get(f"/v1/calls/{call['id']}", headers=account.headers)).json()
    assert fetched == stored
    assert fetched["analysis"]["outcome_schema_version"] == 1


async def test_another_accounts_call_is_not_found_and_scopes_hold(
    client: httpx.AsyncClient, db: Database, account: Account, other_account: Account
) -> None:
    call = await ended_call(client, account)
    assert (await analyse(client, other_account, call["id"], {})).status_code == 404
    reader = await new_account(db, scopes=["calls:read"])
    assert (await put_schema(client, reader, SCHEMA)).status_code == 403
    stranger = await new_account(db, scopes=["contacts:read"])
    response = await client.get("/v1/call-analysis-schema", headers=stranger.headers)
    assert response.status_code == 403


async def test_the_accounts_event_catalogue_describes_its_outcomes(
    client: httpx.AsyncClient, account: Account, other_account: Account
) -> None:
    await put_schema(client, account, SCHEMA)
    call = await ended_call(client, account)
    analysed = (await analyse(client, account, call["id"], OUTCOME)).json()
    catalogue = (await client.get("/v1/event-types", headers=account.headers)).json()
    schema = next(t["schema"] for t in catalogue if t["type"] == "call.analyzed")
    event = (await events_oldest_first(client, account))[-1]
    jsonschema.validate(event, schema)
    bad = {**event, "data": {**analysed, "analysis": {**analysed["analysis"], "outcome": {}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    theirs = (await client.get("/v1/event-types", headers=other_account.headers)).json()
    generic = next(t["schema"] for t in theirs if t["type"] == "call.analyzed")
    jsonschema.validate(bad, generic)


async def test_receivers_get_call_completed_then_call_analyzed_and_filter_on_outcomes(
    worker_app: FastAPI, http: httpx.AsyncClient, owner: Account
) -> None:
    await put_schema(http, owner, SCHEMA)
    async with Receiver() as receiver:
        for path, hook_filter in (
            ("/all", None),
            ("/big", 'event.type == "call.analyzed" && event.data.analysis.outcome.budget > 1000'),
        ):
            body = {
                "url": receiver.url_for(path),
                "events": ["call.completed", "call.analyzed"],
                "filter": hook_filter,
            }
            assert (await http.post("/v1/webhooks", json=body, headers=owner.headers)).is_success
        small = await start_call(http, owner.headers)
        outcome = {**OUTCOME, "budget": 10}
        await complete(http, owner.headers, small["id"], analysis={"outcome": outcome})
        big = await ended_call(http, owner)
        assert (await analyse(http, owner, big["id"], OUTCOME)).status_code == 200
        requests = await receiver.wait_until(
            lambda got: len(got) >= 5, description="4 events to /all and 1 to /big"
        )
    seen = [(r.path, r.json()["type"], r.json()["data"]["id"]) for r in requests]
    assert [s for s in seen if s[0] == "/all"] == [
        ("/all", "call.completed", small["id"]),
        ("/all", "call.analyzed", small["id"]),
        ("/all", "call.completed", big["id"]),
        ("/all", "call.analyzed", big["id"]),
    ]
    assert [s for s in seen if s[0] == "/big"] == [("/big", "call.analyzed", big["id"])]
