"""The event-type catalogue: ``GET /v1/event-types``, the OpenAPI ``webhooks``, example events
from ``POST /v1/webhooks/{id}/test``, and every delivered body of every type validated against
its schema (real deliveries to a real receiver, on SQLite and PostgreSQL)."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from standardwebhooks import Webhook

from hookline.domain.events import EVENT_TYPES
from tests.conftest import Account
from tests.support.api import field_errors
from tests.support.receiver import Receiver

DELIVERABLE = {*EVENT_TYPES, "webhook.test", "webhook.conformance"}


def closed(schema: Any) -> Any:
    """``schema`` with every object that lists properties closed to others: a delivered body
    with a field its schema does not describe fails the test (the public schemas stay open, so
    that adding a field later breaks no receiver)."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node:
                node.setdefault("additionalProperties", False)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


async def catalogue(http: httpx.AsyncClient, owner: Account) -> dict[str, Any]:
    response = await http.get("/v1/event-types", headers=owner.headers)
    assert response.status_code == 200, response.text
    return {entry["type"]: entry for entry in response.json()}


async def test_every_deliverable_type_is_listed_with_a_valid_2020_12_schema(
    http: httpx.AsyncClient,
    owner: Account,
) -> None:
    listed = await catalogue(http, owner)
    assert set(listed) == DELIVERABLE
    for event_type, entry in listed.items():
        assert set(entry) == {"type", "description", "schema", "thin_schema"}
        thin = entry["thin_schema"]
        Draft202012Validator.check_schema(thin)
        assert thin["properties"]["type"]["const"] == event_type
        assert set(thin["properties"]) == {"id", "type", "timestamp", "data"}
        assert entry["description"]
        schema = entry["schema"]
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)
        assert schema["properties"]["type"]["const"] == event_type
        assert {"id", "type", "timestamp", "data"} <= set(schema["required"])
    assert "previous_attributes" in listed["contact.updated"]["schema"]["required"]
    assert "previous_attributes" not in listed["contact.created"]["schema"]["properties"]


async def test_the_catalogue_needs_a_key(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/event-types")
    assert response.status_code == 401


async def test_openapi_webhooks_carry_every_type(
    http: httpx.AsyncClient,
    owner: Account,
) -> None:
    document = (await http.get("/v1/openapi.json")).json()
    assert document["openapi"].startswith("3.1")
    assert set(document["webhooks"]) == DELIVERABLE
    for event_type, item in document["webhooks"].items():
        body = item["post"]["requestBody"]["content"]["application/json"]["schema"]
        full, thin = body["oneOf"]
        assert thin == {"$ref": "#/components/schemas/ThinEvent"}
        name = full["$ref"].rsplit("/", 1)[1]
        assert document["components"]["schemas"][name]["properties"]["type"]["const"] == event_type


def openapi_validator(document: dict[str, Any], event_type: str) -> Draft202012Validator:
    """Validates against the OpenAPI document's own component for ``event_type``."""
    body = document["webhooks"][event_type]["post"]["requestBody"]["content"]["application/json"]
    resource = Resource.from_contents(closed(document), default_specification=DRAFT202012)
    registry: Registry = Registry().with_resource("urn:hookline:openapi", resource)
    return Draft202012Validator(
        {"$ref": "urn:hookline:openapi" + body["schema"]["oneOf"][0]["$ref"]}, registry=registry
    )


async def _produce_every_event(http: httpx.AsyncClient, owner: Account, webhook_id: str) -> None:
    """Real events of every type the API can cause, then an example of every type."""
    h = owner.headers
    contact = (
        await http.post(
            "/v1/contacts",
            json={"first_name": "Ada", "phone_number": "+14155552671", "tags": ["vip"]},
            headers=h,
        )
    ).json()
    await http.patch(
        f"/v1/contacts/{contact['id']}", json={"company": "Acme", "tags": []}, headers=h
    )
    call = (
        await http.post(
            "/v1/calls",
            json={"call_type": "inbound", "customer_phone_number": "+14155552671"},
            headers=h,
        )
    ).json()
    analysis = {"lead_qualification": "qualified", "appointment_booked": True, "cost": "1.5"}
    completed = await http.post(
        f"/v1/calls/{call['id']}/complete",
        json={"call_status": "completed", "analysis": analysis},
        headers=h,
    )
    assert completed.status_code == 200, completed.text
    plain = await http.post(
        "/v1/calls",
        json={"call_type": "outbound", "customer_phone_number": "+12025550143"},
        headers=h,
    )
    await http.post(
        f"/v1/calls/{plain.json()['id']}/complete", json={"call_status": "busy"}, headers=h
    )
    await http.delete(f"/v1/contacts/{contact['id']}", headers=h)
    assert (await http.post(f"/v1/webhooks/{webhook_id}/test", headers=h)).status_code == 202
    for event_type in sorted(DELIVERABLE):
        response = await http.post(
            f"/v1/webhooks/{webhook_id}/test", json={"event_type": event_type}, headers=h
        )
        assert response.status_code == 202, response.text


async def test_every_delivered_body_validates_against_its_schema(
    http: httpx.AsyncClient,
    owner: Account,
) -> None:
    listed = await catalogue(http, owner)
    document = (await http.get("/v1/openapi.json")).json()
    async with Receiver() as receiver:
        # Subscribed to one type only: the examples arrive whatever it subscribes to.
        created = await http.post(
            "/v1/webhooks",
            json={"url": receiver.url, "events": ["contact.created"]},
            headers=owner.headers,
        )
        webhook = created.json()
        everything = await http.post(
            "/v1/webhooks",
            json={"url": receiver.url_for("/all"), "events": sorted(EVENT_TYPES)},
            headers=owner.headers,
        )
        assert everything.status_code == 201, everything.text
        await _produce_every_event(http, owner, webhook["id"])
        # 1 real contact.created + 1 webhook.test + one example per type to the first;
        # 8 real events (2 contact + 1 delete, 2 starts, 2 completes, 2 outcomes) to the second.
        expected = 1 + 1 + len(DELIVERABLE) + 9
        requests = await receiver.wait_for(expected, timeout=20)
    secrets = {"/hook": webhook["secret"], "/all": everything.json()["secret"]}
    seen: dict[str, int] = {}
    for request in requests:
        body = Webhook(secrets[request.path]).verify(request.body, request.headers)
        event_type = body["type"]
        seen[event_type] = seen.get(event_type, 0) + 1
        strict = Draft202012Validator(closed(listed[event_type]["schema"]))
        errors = [e.message for e in strict.iter_errors(body)]
        assert not errors, (event_type, errors, body)
        assert not list(openapi_validator(document, event_type).iter_errors(body))
    assert set(seen) == DELIVERABLE
    # Real ones as well as examples: two of each outcome type, four call.completed... at least.
    assert seen["call.completed"] >= 3 and seen["lead.qualified"] >= 2


async def test_a_schema_rejects_a_body_that_breaks_it(
    http: httpx.AsyncClient,
    owner: Account,
) -> None:
    """The validation above has teeth: wrong types, a missing field, an unknown one fail."""
    schema = (await catalogue(http, owner))["call.completed"]["schema"]
    validator = Draft202012Validator(closed(schema))
    good: dict[str, Any] = {
        "id": "evt_1",
        "type": "call.completed",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "data": {
            "id": "call-1",
            "contact_id": None,
            "call_type": "inbound",
            "customer_phone_number": "+1",
            "call_status": "completed",
            "call_started_at": "t",
            "call_ended_at": "t",
            "duration_seconds": 1,
            "metadata": None,
            "analysis": None,
            "created_at": "t",
            "updated_at": "t",
        },
    }
    assert not list(validator.iter_errors(good))
    for broken in (
        {**good, "type": "call.started"},
        {**good, "data": {**good["data"], "duration_seconds": "1"}},
        {**good, "data": {k: v for k, v in good["data"].items() if k != "analysis"}},
        {**good, "data": {**good["data"], "analysis": {"cost": 0.42}}},
        {**good, "extra": 1},
    ):
        assert list(validator.iter_errors(broken)), broken


@pytest.mark.parametrize(
    ("body", "content_type", "status", "field"),
    [
        (b'{"event_type": "contact.nope"}', "application/json", 422, "event_type"),
        (b'{"event_type": 5}', "application/json", 422, "event_type"),
        (b"{}", "application/json", 422, "event_type"),
        (b'{"event_type": "contact.created", "x": 1}', "application/json", 422, "x"),
        (b"not json", "application/json", 400, None),
        (b'{"event_type": "contact.created"}', "text/plain", 415, None),
    ],
)
async def test_test_event_body_is_checked(
    http: httpx.AsyncClient,
    owner: Account,
    body: bytes,
    content_type: str,
    status: int,
    field: str | None,
) -> None:
    created = await http.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/x", "events": ["contact.created"]},
        headers=owner.headers,
    )
    response = await http.post(
        f"/v1/webhooks/{created.json()['id']}/test",
        content=body,
        headers={**owner.headers, "content-type": content_type},
    )
    assert response.status_code == status, response.text
    if field is not None:
        assert field in field_errors(response)
