"""The generated Python client (clients/python, ``hookline_client``) against a live server:
contacts and webhooks created, listed and deleted through it, checked on the server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hookline_client import AuthenticatedClient
from hookline_client.api.contacts import create_contact, delete_contact, get_contact, list_contacts
from hookline_client.api.webhooks import create_webhook, delete_webhook, get_webhook, list_webhooks
from hookline_client.models import (
    ContactCreate,
    ContactOut,
    ErrorDetailDetailsType0,
    ErrorOut,
    SuccessOut,
    WebhookCreate,
    WebhookCreateEventsItem,
    WebhookCreateHeadersType0,
    WebhookOut,
)

from tests.clients.conftest import Live


@pytest.fixture
def client(live: Live) -> Iterator[AuthenticatedClient]:
    # Entered, so that its httpx client's pooled connections are closed after the test.
    with AuthenticatedClient(base_url=live.base_url, token=live.account.key) as client:
        yield client


def test_contacts_are_created_listed_and_deleted_through_the_python_client(
    client: AuthenticatedClient, live: Live
) -> None:
    body = ContactCreate(first_name="Ada", phone_number="+1 415 555 2671", tags=["python"])
    created = create_contact.sync_detailed(client=client, body=body)
    assert created.status_code == 201 and isinstance(created.parsed, ContactOut)
    contact = created.parsed
    assert contact.phone_number == "+14155552671" and contact.tags == ["python"]

    listed = list_contacts.sync(client=client, limit=100)
    assert isinstance(listed, list) and contact.id in {c.id for c in listed}

    deleted = delete_contact.sync(contact.id, client=client)
    assert isinstance(deleted, SuccessOut)
    gone = get_contact.sync_detailed(contact.id, client=client)
    assert gone.status_code == 404
    assert isinstance(gone.parsed, ErrorOut) and gone.parsed.error.code == "not_found"
    # The server saw exactly that: the contact's creation and deletion as events.
    events = httpx.get(f"{live.base_url}/v1/events", headers=live.account.headers).json()
    assert {e["type"] for e in events if e["data"]["id"] == contact.id} == {
        "contact.created",
        "contact.deleted",
    }


def test_webhooks_are_created_listed_and_deleted_through_the_python_client(
    client: AuthenticatedClient, live: Live
) -> None:
    headers = WebhookCreateHeadersType0()
    headers["X-Api-Key"] = "gateway-key"
    body = WebhookCreate(
        url="http://127.0.0.1:9/hooks",
        events=[WebhookCreateEventsItem.CONTACT_CREATED, WebhookCreateEventsItem.CALL_COMPLETED],
        filter_='event.type == "call.completed" || event.data.first_name == "Ada"',
        headers=headers,
        rate_limit=10,
    )
    created = create_webhook.sync_detailed(client=client, body=body)
    assert created.status_code == 201, created.content
    webhook = created.parsed
    assert isinstance(webhook, WebhookOut) and isinstance(webhook.secret, str)
    assert webhook.secret.startswith("whsec_") and webhook.auth is None
    assert webhook.headers["X-Api-Key"] == "********" and webhook.rate_limit == 10

    listed = list_webhooks.sync(client=client)
    assert isinstance(listed, list) and webhook.id in {w.id for w in listed}
    fetched = httpx.get(
        f"{live.base_url}/v1/webhooks/{webhook.id}", headers=live.account.headers
    ).json()
    assert fetched["filter"] == body.filter_ and fetched["events"] == [
        "contact.created",
        "call.completed",
    ]

    assert isinstance(delete_webhook.sync(webhook.id, client=client), SuccessOut)
    assert get_webhook.sync_detailed(webhook.id, client=client).status_code == 404


def test_the_python_client_reports_a_refusal_as_the_apis_error(
    client: AuthenticatedClient,
) -> None:
    body = WebhookCreate(url="http://127.0.0.1:9/hooks", events=[], filter_="event.type ==")
    refused = create_webhook.sync_detailed(client=client, body=body)
    assert refused.status_code == 422 and isinstance(refused.parsed, ErrorOut)
    details = refused.parsed.error.details
    assert isinstance(details, ErrorDetailDetailsType0)
    assert [f["field"] for f in details.to_dict()["fields"]] == ["events", "filter"]
