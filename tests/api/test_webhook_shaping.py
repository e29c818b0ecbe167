"""Less data per webhook, with the in-process worker and real receivers: `redact` paths are
absent from what the receiver gets and the signature verifies over what was sent; a thin event
carries only its ids and a URL that reads the object with a key; `/test` and the receiver
check send those shapes too; paths are checked against the subscribed types (also when a
PATCH changes `events`); on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks import Webhook

from tests.conftest import Account
from tests.support.api import field_errors
from tests.support.receiver import Receiver

THIN_KEYS = {"id", "type", "timestamp", "data"}


async def subscribe(http: httpx.AsyncClient, owner: Account, url: str, **fields: Any) -> Any:
    body = {"url": url, "events": ["contact.created", "contact.updated"], **fields}
    response = await http.post("/v1/webhooks", json=body, headers=owner.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def new_contact(http: httpx.AsyncClient, owner: Account) -> Any:
    body = {"first_name": "Ada", "phone_number": "+14155552671", "email": "ada@example.com"}
    response = await http.post("/v1/contacts", json=body, headers=owner.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def test_redacted_fields_are_absent_and_the_signature_verifies(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver, Receiver() as full:
        webhook = await subscribe(
            http, owner, receiver.url, redact=["data.phone_number", "data.email"]
        )
        assert webhook["redact"] == ["data.phone_number", "data.email"]
        assert webhook["payload"] == "full"
        await subscribe(http, owner, full.url)
        contact = await new_contact(http, owner)
        changed = await http.patch(
            f"/v1/contacts/{contact['id']}",
            json={"phone_number": "+14155550100", "company": "Example"},
            headers=owner.headers,
        )
        assert changed.status_code == 200, changed.text
        created, updated = await receiver.wait_for(2)
        for request in (created, updated):
            payload = Webhook(webhook["secret"]).verify(request.body, request.headers)
            assert "phone_number" not in payload["data"]
            assert "email" not in payload["data"]
            assert payload["data"]["first_name"] == "Ada"
        assert b"+1415555" not in created.body + updated.body
        previous = updated.json()["previous_attributes"]
        assert "phone_number" not in previous
        assert previous["company"] is None
        # A webhook without redact paths receives the whole body.
        [unredacted, _] = await full.wait_for(2)
        assert unredacted.json()["data"]["phone_number"] == "+14155552671"


async def test_a_thin_event_has_its_ids_and_a_url_that_reads_the_object(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    async with Receiver() as receiver:
        webhook = await subscribe(http, owner, receiver.url, payload="thin")
        assert webhook["payload"] == "thin"
        contact = await new_contact(http, owner)
        [request] = await receiver.wait_for(1)
        payload = Webhook(webhook["secret"]).verify(request.body, request.headers)
        assert set(payload) == THIN_KEYS
        assert payload["type"] == "contact.created"
        assert payload["id"] == request.headers["webhook-id"]
        public_url = worker_app.state.settings.public_url.rstrip("/")
        assert payload["data"] == {
            "id": contact["id"],
            "url": f"{public_url}/v1/contacts/{contact['id']}",
        }
        fetched = await http.get(
            payload["data"]["url"].removeprefix(public_url), headers=owner.headers
        )
        assert fetched.status_code == 200
        assert fetched.json()["phone_number"] == "+14155552671"
        assert (await http.get(payload["data"]["url"].removeprefix(public_url))).status_code == 401


async def test_test_sends_and_receiver_checks_are_shaped_like_deliveries(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as redacted, Receiver() as thin:
        hook = await subscribe(http, owner, redacted.url, redact=["data.phone_number"])
        thin_hook = await subscribe(http, owner, thin.url, payload="thin")
        for webhook in (hook, thin_hook):
            sent = await http.post(
                f"/v1/webhooks/{webhook['id']}/test",
                json={"event_type": "contact.created"},
                headers=owner.headers,
            )
            assert sent.status_code == 202, sent.text
        [example] = await redacted.wait_for(1)
        data = Webhook(hook["secret"]).verify(example.body, example.headers)["data"]
        assert "phone_number" not in data
        assert data["first_name"] == "Ada"
        [thin_example] = await thin.wait_for(1)
        assert set(Webhook(thin_hook["secret"]).verify(thin_example.body, thin_example.headers))
        assert set(thin_example.json()) == THIN_KEYS
        thin.clear()
        check = await http.post(
            f"/v1/webhooks/{thin_hook['id']}/conformance", headers=owner.headers
        )
        assert check.status_code == 200, check.text
        probes = await thin.wait_for(5)
        assert all(set(probe.json()) <= {*THIN_KEYS} for probe in probes[:3])
        assert probes[0].json()["data"]["id"] == thin_hook["id"]


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"redact": ["data.analysis.transcript"]}, "data.analysis.transcript"),
        ({"redact": ["data.nope"]}, "data.nope"),
        ({"redact": ["phone_number"]}, "dot path under data"),
        ({"redact": ["id"]}, "dot path under data"),
        ({"redact": ["data."]}, "dot path under data"),
        ({"redact": ["data..x"]}, "dot path under data"),
        ({"redact": ["data.phone number"]}, "dot path under data"),
        ({"redact": ["data.x\u0000"]}, ""),
        ({"redact": ["data." + "x" * 300]}, "200"),
        ({"redact": [f"data.k{i}" for i in range(51)]}, "at most 50"),
        ({"redact": "data.phone_number"}, ""),
        ({"redact": [1]}, ""),
    ],
)
async def test_bad_redact_paths_are_refused_naming_redact(
    http: httpx.AsyncClient, owner: Account, fields: dict[str, Any], fragment: str
) -> None:
    body = {"url": "https://example.com/hook", "events": ["contact.created"], **fields}
    response = await http.post("/v1/webhooks", json=body, headers=owner.headers)
    assert response.status_code == 422, response.text
    errors = field_errors(response)
    assert any(name.startswith("redact") for name in errors), errors
    assert any(fragment in message for message in errors.values()), errors


@pytest.mark.parametrize("payload", ["medium", None, 1, "THIN"])
async def test_an_unknown_payload_is_refused(
    http: httpx.AsyncClient, owner: Account, payload: Any
) -> None:
    body = {"url": "https://example.com/hook", "events": ["contact.created"], "payload": payload}
    response = await http.post("/v1/webhooks", json=body, headers=owner.headers)
    assert response.status_code == 422, response.text
    assert "payload" in field_errors(response)


async def test_redact_is_checked_again_when_events_change(
    http: httpx.AsyncClient, owner: Account
) -> None:
    webhook = await subscribe(
        http,
        owner,
        "https://example.com/hook",
        events=["contact.created", "call.completed"],
        redact=["data.analysis.transcript", "data.metadata.ssn", "data.analysis.outcome.budget"],
    )
    path = f"/v1/webhooks/{webhook['id']}"
    narrowed = await http.patch(path, json={"events": ["contact.created"]}, headers=owner.headers)
    assert narrowed.status_code == 422, narrowed.text
    assert "data.analysis.transcript" in field_errors(narrowed)["redact"]
    kept = (await http.get(path, headers=owner.headers)).json()
    assert kept["events"] == ["contact.created", "call.completed"]
    both = await http.patch(
        path, json={"events": ["contact.created"], "redact": None}, headers=owner.headers
    )
    assert both.status_code == 200, both.text
    assert both.json()["redact"] == []
    thin = await http.patch(path, json={"payload": "thin"}, headers=owner.headers)
    assert thin.json()["payload"] == "thin"
    null = await http.patch(path, json={"payload": None}, headers=owner.headers)
    assert null.status_code == 422
    assert "payload" in field_errors(null)
