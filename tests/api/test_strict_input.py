"""Strict input on SQLite and PostgreSQL: no input is a 500, and the two backends answer alike.

Every body field, path id and query parameter gets NUL and other control characters, huge values
and wrong types; every route gets an id that cannot be one; unknown query parameters are named;
a 405 lists every method of its path.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import Account
from tests.support.api import field_errors
from tests.support.routes import http_routes

CONTACT = {"first_name": "Ada", "phone_number": "+14155552671"}
CALL = {"call_type": "inbound", "customer_phone_number": "+14155552671"}
HOOK = {"url": "https://example.com/hooks", "events": ["contact.created"]}
COMPLETE = {"call_status": "completed"}
CONTROL_CHARACTERS = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f"]

# (method, path template, valid body) for every body the API takes; each string field is attacked.
BODIES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("POST", "/v1/contacts", CONTACT,
     ["first_name", "last_name", "phone_number", "email", "company", "notes"]),
    ("PATCH", "/v1/contacts/{contact_id}", {},
     ["first_name", "last_name", "phone_number", "email", "company", "notes"]),
    ("POST", "/v1/calls", CALL,
     ["call_type", "customer_phone_number", "contact_id", "call_started_at"]),
    ("POST", "/v1/calls/{call_id}/complete", COMPLETE, ["call_status", "call_ended_at"]),
    ("POST", "/v1/webhooks", HOOK, ["url", "name"]),
    ("PATCH", "/v1/webhooks/{webhook_id}", {}, ["url", "name"]),
]  # fmt: skip


async def _ids(client: httpx.AsyncClient, account: Account) -> dict[str, str]:
    """One live resource of each kind, to fill path templates."""
    headers = account.headers
    contact = (await client.post("/v1/contacts", json=CONTACT, headers=headers)).json()
    call = (await client.post("/v1/calls", json=CALL, headers=headers)).json()
    hook = (await client.post("/v1/webhooks", json=HOOK, headers=headers)).json()
    return {"contact_id": contact["id"], "call_id": call["id"], "webhook_id": hook["id"]}


async def _send(
    client: httpx.AsyncClient, account: Account, method: str, path: str, body: Any
) -> httpx.Response:
    return await client.request(method, path, json=body, headers=account.headers)


@pytest.mark.parametrize(("method", "template", "valid", "fields"), BODIES)
async def test_control_characters_in_any_text_field_are_a_422_naming_it(
    client: httpx.AsyncClient,
    account: Account,
    method: str,
    template: str,
    valid: dict[str, Any],
    fields: list[str],
) -> None:
    path = template.format(**await _ids(client, account))
    for field in fields:
        for char in CONTROL_CHARACTERS:
            body = {**valid, field: f"ok{char}ok"}
            response = await _send(client, account, method, path, body)
            errors = field_errors(response)
            assert field in errors, (field, repr(char), errors)


async def test_control_characters_nested_in_tags_and_metadata_are_refused(
    client: httpx.AsyncClient, account: Account
) -> None:
    for body in ({**CONTACT, "tags": ["vip", "a\x00b"]}, {**CONTACT, "tags": ["\x1b"]}):
        errors = field_errors(await _send(client, account, "POST", "/v1/contacts", body))
        assert "tags[1]" in errors.get("tags", "") or "tags[0]" in errors.get("tags", "")
    for metadata in ({"a": "x\x00"}, {"k\x00": 1}, {"a": [{"b": "\x07"}]}):
        response = await _send(client, account, "POST", "/v1/calls", {**CALL, "metadata": metadata})
        assert "metadata" in field_errors(response)


async def test_tab_newline_and_carriage_return_are_kept_in_text(
    client: httpx.AsyncClient, account: Account
) -> None:
    notes = "line one\r\n\tline two"
    response = await _send(client, account, "POST", "/v1/contacts", {**CONTACT, "notes": notes})
    assert response.status_code == 201, response.text
    assert response.json()["notes"] == notes


@pytest.mark.parametrize(
    "invisible", ["\u200b", "\u200b\u200d\ufeff", " \u2060 ", "\u3164", "\u00ad", "\u2800"]
)
async def test_names_of_invisible_characters_alone_are_refused(
    client: httpx.AsyncClient, account: Account, invisible: str
) -> None:
    attempts = [
        ("POST", "/v1/contacts", {**CONTACT, "first_name": invisible}, "first_name"),
        ("POST", "/v1/contacts", {**CONTACT, "last_name": invisible}, "last_name"),
        ("POST", "/v1/contacts", {**CONTACT, "company": invisible}, "company"),
        ("POST", "/v1/contacts", {**CONTACT, "tags": [invisible]}, "tags"),
        ("POST", "/v1/webhooks", {**HOOK, "name": invisible}, "name"),
    ]
    for method, path, body, field in attempts:
        assert field in field_errors(await _send(client, account, method, path, body))


async def test_a_visible_character_among_invisible_ones_is_a_name(
    client: httpx.AsyncClient, account: Account
) -> None:
    body = {**CONTACT, "first_name": "\u200bZoë\u200d", "last_name": "   "}
    response = await _send(client, account, "POST", "/v1/contacts", body)
    assert response.status_code == 201, response.text
    assert response.json()["first_name"] == "\u200bZoë\u200d"
    assert response.json()["last_name"] is None  # blank optional names are stored as null


@pytest.mark.parametrize(
    "moment",
    [
        "1970-01-01T00:00:00+01:00",
        "1970-01-01T00:59:59.999+01:00",
        "1969-12-31T23:59:59.999Z",
        "0001-01-01T00:00:00Z",
        "9998-12-31T23:00:00-01:00",
        "9998-12-31T23:59:59-00:01",
        "9999-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999Z",
        "0000-06-01T00:00:00Z",
        "10000-01-01T00:00:00Z",
        "2026-01-01T00:00:00+24:00",
        "2026-02-30T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T10:00:00",
        "1700000000",
    ],
)
async def test_timestamps_outside_years_1970_to_9998_are_a_422(
    client: httpx.AsyncClient, account: Account, moment: str
) -> None:
    ids = await _ids(client, account)
    started = await _send(client, account, "POST", "/v1/calls", {**CALL, "call_started_at": moment})
    assert "call_started_at" in field_errors(started)
    path = f"/v1/calls/{ids['call_id']}/complete"
    ended = await _send(client, account, "POST", path, {**COMPLETE, "call_ended_at": moment})
    assert "call_ended_at" in field_errors(ended)


async def test_the_extreme_storable_timestamps_are_kept(
    client: httpx.AsyncClient, account: Account
) -> None:
    for moment, stored in [
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
        ("1970-01-01T05:00:00-01:00", "1970-01-01T06:00:00.000Z"),
        ("9998-12-31T23:59:59.999+00:00", "9998-12-31T23:59:59.999Z"),
        ("9998-12-31T00:30:00+01:00", "9998-12-30T23:30:00.000Z"),
    ]:
        body = {**CALL, "call_started_at": moment}
        response = await _send(client, account, "POST", "/v1/calls", body)
        assert response.status_code == 201, response.text
        assert response.json()["call_started_at"] == stored


@pytest.mark.parametrize("value", ["yes", "true", 1, 0, "1", None])
async def test_booleans_are_json_true_or_false_only(
    client: httpx.AsyncClient, account: Account, value: Any
) -> None:
    ids = await _ids(client, account)
    created = await _send(client, account, "POST", "/v1/webhooks", {**HOOK, "is_active": value})
    assert "is_active" in field_errors(created)
    path = f"/v1/webhooks/{ids['webhook_id']}"
    patched = await _send(client, account, "PATCH", path, {"is_active": value})
    assert "is_active" in field_errors(patched)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/a b",
        'https://example.com/"quoted"',
        "https://example.com/<script>",
        "https://exa mple.com/",
        "https://example.com/{x}",
        "https://example.com/%zz",
        "https://example.com:99999/",
        "https://[::::]/",
        "https://example.com/\\x",
        "https://example.com/a^b",
        "mailto:ada@example.com",
    ],
)
async def test_urls_must_be_rfc_3986(client: httpx.AsyncClient, account: Account, url: str) -> None:
    ids = await _ids(client, account)
    created = await _send(client, account, "POST", "/v1/webhooks", {**HOOK, "url": url})
    assert "url" in field_errors(created)
    path = f"/v1/webhooks/{ids['webhook_id']}"
    assert "url" in field_errors(await _send(client, account, "PATCH", path, {"url": url}))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("first_name", "x" * 1_000),
        ("first_name", 12),
        ("first_name", ["Ada"]),
        ("phone_number", "+1" + "4" * 5_000),
        ("phone_number", 14155552671),
        ("email", "a" * 300 + "@example.com"),
        ("email", {"at": "example.com"}),
        ("tags", [f"t{i}" for i in range(51)]),
        ("tags", ["x" * 65]),
        ("tags", [1, 2]),
        ("tags", "vip"),
        ("notes", "n" * 10_001),
        ("notes", False),
    ],
)
async def test_huge_values_and_wrong_types_are_a_422_naming_the_field(
    client: httpx.AsyncClient, account: Account, field: str, value: Any
) -> None:
    ids = await _ids(client, account)
    body = {**CONTACT, field: value}
    created = field_errors(await _send(client, account, "POST", "/v1/contacts", body))
    assert {name.split(".")[0] for name in created} == {field}, created
    path = f"/v1/contacts/{ids['contact_id']}"
    patched = field_errors(await _send(client, account, "PATCH", path, {field: value}))
    assert {name.split(".")[0] for name in patched} == {field}, patched


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)


def _v1_routes(app: FastAPI) -> list[tuple[str, str]]:
    routes = [
        (r.method, r.path) for r in http_routes(app) if r.path.startswith("/v1/") and r.in_schema
    ]
    assert any("{" in path for _, path in routes)
    return routes


@pytest.mark.parametrize("bad_id", ["abc\x00", "\x00", "x%00y", "../etc", "a" * 5_000, "é"])
async def test_every_route_answers_404_to_a_path_id_that_cannot_be_an_id(
    app: FastAPI, client: httpx.AsyncClient, account: Account, bad_id: str
) -> None:
    ids = await _ids(client, account)
    checked = 0
    for method, template in _v1_routes(app):
        names = re.findall(r"\{(\w+)\}", template)
        for name in names:
            values = {n: ids.get(n, "x") for n in names}
            values[name] = quote(bad_id, safe="")
            response = await client.request(
                method, _fill(template, values), json={}, headers=account.headers
            )
            assert response.status_code == 404, (method, template, name, response.text)
            assert response.json()["error"]["code"] == "not_found"
            checked += 1
    assert checked >= 10


async def test_unknown_query_parameters_are_a_422_naming_each(
    app: FastAPI, client: httpx.AsyncClient, account: Account
) -> None:
    ids = await _ids(client, account)
    for method, template in _v1_routes(app):
        unknown = {"delivery_id": "dlv_" + "0" * 32, "event_id": "evt_x", "erasure_id": "er_x"}
        path = _fill(template, {**ids, **unknown})
        response = await client.request(
            method,
            path,
            params={"status": "completed", "colour": "red"},
            json={},
            headers=account.headers,
        )
        if method == "GET" and template == "/v1/webhooks/{webhook_id}/deliveries":
            # `status` is a real filter there: only `colour` is unknown.
            assert set(field_errors(response)) == {"colour"}, response.text
            continue
        assert set(field_errors(response)) == {"status", "colour"}, (method, template)


async def test_a_misspelled_filter_never_returns_an_unfiltered_list(
    client: httpx.AsyncClient, account: Account
) -> None:
    await _send(client, account, "POST", "/v1/calls", CALL)
    response = await client.get("/v1/calls?status=completed", headers=account.headers)
    assert field_errors(response) == {
        "status": response.json()["error"]["details"]["fields"][0]["message"]
    }
    assert "call_status" in response.json()["error"]["message"]  # names what it takes


@pytest.mark.parametrize(
    "path",
    [
        "/v1/contacts?search={}",
        "/v1/contacts?tags={}",
        "/v1/contacts?email={}",
        "/v1/contacts?phone_number={}",
        "/v1/calls?contact_id={}",
        "/v1/calls?cursor={}",
        "/v1/events?type={}",
        "/v1/contacts?limit={}",
    ],
)
async def test_query_filters_with_control_characters_are_a_422(
    client: httpx.AsyncClient, account: Account, path: str
) -> None:
    name = path.split("?")[1].split("=")[0]
    for char in ("%00", "%01", "%1B"):
        response = await client.get(path.format(f"a{char}b"), headers=account.headers)
        assert name in field_errors(response)


async def test_every_paginated_list_accepts_offset(
    client: httpx.AsyncClient, account: Account
) -> None:
    ids = await _ids(client, account)
    for _ in range(2):
        await _send(client, account, "POST", "/v1/calls", CALL)
    lists = [
        "/v1/contacts",
        "/v1/calls",
        "/v1/events",
        f"/v1/webhooks/{ids['webhook_id']}/deliveries",
    ]
    for path in lists:
        whole = (await client.get(path, headers=account.headers)).json()
        skipped = await client.get(path, params={"offset": 1}, headers=account.headers)
        assert skipped.status_code == 200, (path, skipped.text)
        assert skipped.json() == whole[1:], path
        assert "offset" in field_errors(
            await client.get(path, params={"offset": -1}, headers=account.headers)
        )


async def test_a_405_lists_every_method_of_its_path(
    app: FastAPI, client: httpx.AsyncClient, account: Account
) -> None:
    ids = {
        "contact_id": "x",
        "call_id": "x",
        "webhook_id": "x",
        "delivery_id": "x",
        "event_id": "x",
        "erasure_id": "x",
    }
    by_path: dict[str, set[str]] = {}
    for method, template in _v1_routes(app):
        by_path.setdefault(template, set()).add(method)
    for template, methods in by_path.items():
        for wrong in {"GET", "POST", "PUT", "PATCH", "DELETE"} - methods:
            response = await client.request(wrong, _fill(template, ids), headers=account.headers)
            assert response.status_code == 405, (wrong, template)
            assert response.json()["error"]["code"] == "method_not_allowed"
            allowed = {m.strip() for m in response.headers["allow"].split(",")}
            assert allowed == methods, (template, allowed)
    contact = (await client.put("/v1/contacts/x", headers=account.headers)).headers["allow"]
    assert contact == "GET, PATCH, DELETE"


def _strings(schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    """Every string schema reachable from ``schema`` (through $ref, anyOf, items, properties)."""
    if "$ref" in schema:
        return _strings(components[schema["$ref"].rsplit("/", 1)[1]], components)
    found = [schema] if schema.get("type") == "string" else []
    for option in schema.get("anyOf", []):
        found += _strings(option, components)
    if isinstance(schema.get("items"), dict):
        found += _strings(schema["items"], components)
    for item in schema.get("properties", {}).values():
        found += _strings(item, components)
    return found


async def test_the_openapi_document_states_every_input_rule(client: httpx.AsyncClient) -> None:
    document = (await client.get("/v1/openapi.json")).json()
    components = document["components"]["schemas"]
    checked = 0
    for path, operations in document["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                for string in _strings(parameter["schema"], components):
                    assert "pattern" in string or "enum" in string, (path, parameter["name"])
                    checked += 1
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            for string in _strings(body["schema"], components) if body else []:
                assert {"pattern", "enum"} & set(string), (path, string)
                checked += 1
    assert checked > 60
    assert components["WebhookCreate"]["properties"]["events"]["minItems"] == 1
    assert components["ContactCreate"]["properties"]["first_name"]["maxLength"] == 100
    assert components["ContactCreate"]["properties"]["phone_number"]["pattern"].startswith("^\\+")
    assert components["WebhookCreate"]["properties"]["is_active"] == {
        "type": "boolean",
        "title": "Is Active",
        "default": True,
    }
    update = components["ContactUpdate"]["properties"]
    assert "anyOf" not in update["first_name"]  # null is refused for a required field
