"""Every /v1 route with an id crossed with another account's ids → 404, and nothing changed.

The matrix is built from the app's own routes, so a new route with an id is covered (or this
test fails asking for a request body for it).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import httpx
from fastapi import FastAPI

from hookline import ids
from hookline.storage.db import Database
from hookline.storage.models import deliveries
from hookline.timeutil import iso, utcnow
from tests.conftest import Account
from tests.support.routes import http_routes

# A valid body for each mutating route, so that a 404 can't hide behind a 422.
BODIES: dict[tuple[str, str], dict[str, Any] | None] = {
    ("PATCH", "/v1/contacts/{contact_id}"): {"first_name": "Mallory"},
    ("POST", "/v1/calls/{call_id}/complete"): {"call_status": "completed"},
    ("POST", "/v1/calls/{call_id}/analysis"): {"budget": 5},
    ("POST", "/v1/contacts/{contact_id}/erase"): None,
    ("PATCH", "/v1/webhooks/{webhook_id}"): {"is_active": False, "url": "http://127.0.0.1:9/x"},
    ("POST", "/v1/webhooks/{webhook_id}/recover"): {"since": iso(utcnow() - timedelta(hours=1))},
}
NO_BODY = {"GET", "DELETE"}
BODYLESS_POSTS = re.compile(r"/(rotate-secret|test|retry|conformance)$")


async def _owned_resources(
    client: httpx.AsyncClient, db: Database, owner: Account
) -> dict[str, str]:
    headers = owner.headers
    contact = await client.post(
        "/v1/contacts",
        json={"first_name": "Ada", "phone_number": "+14155552671"},
        headers=headers,
    )
    call = await client.post(
        "/v1/calls",
        json={"call_type": "inbound", "customer_phone_number": "+14155552671"},
        headers=headers,
    )
    webhook = await client.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        headers=headers,
    )
    for response in (contact, call, webhook):
        assert response.status_code == 201, response.text
    bea = {"first_name": "Bea", "phone_number": "+14155552672"}
    erased = await client.post("/v1/contacts", json=bea, headers=headers)
    erasure = await client.post(f"/v1/contacts/{erased.json()['id']}/erase", headers=headers)
    assert erasure.status_code == 202, erasure.text
    events = (await client.get("/v1/events", headers=headers)).json()
    delivery_id = ids.delivery_id()
    now = utcnow()
    async with db.begin() as conn:
        await conn.execute(
            deliveries.insert().values(
                id=delivery_id,
                account_id=owner.id,
                webhook_id=webhook.json()["id"],
                event_id=events[0]["id"],
                event_type=events[0]["type"],
                status="failed",
                attempts=8,
                created_at=now,
                updated_at=now,
            )
        )
    return {
        "contact_id": contact.json()["id"],
        "call_id": call.json()["id"],
        "webhook_id": webhook.json()["id"],
        "event_id": events[0]["id"],
        "delivery_id": delivery_id,
        "erasure_id": erasure.json()["erasure_id"],
    }


def _routes_with_ids(app: FastAPI) -> list[tuple[str, str]]:
    return [
        (r.method, r.path) for r in http_routes(app) if r.path.startswith("/v1/") and "{" in r.path
    ]


async def _snapshot(client: httpx.AsyncClient, owner: Account, owned: dict[str, str]) -> Any:
    paths = [
        f"/v1/contacts/{owned['contact_id']}",
        f"/v1/calls/{owned['call_id']}",
        f"/v1/webhooks/{owned['webhook_id']}",
        f"/v1/events/{owned['event_id']}",
        "/v1/contacts",
        "/v1/webhooks",
        "/v1/calls",
    ]
    return [(await client.get(p, headers=owner.headers)).json() for p in paths]


async def test_another_accounts_ids_are_404_everywhere_and_change_nothing(
    app: FastAPI,
    client: httpx.AsyncClient,
    db: Database,
    account: Account,
    other_account: Account,
) -> None:
    owned = await _owned_resources(client, db, account)
    before = await _snapshot(client, account, owned)
    routes = _routes_with_ids(app)
    assert len(routes) >= 10, routes
    for method, template in routes:
        path = template.format(**owned)
        if method in NO_BODY or BODYLESS_POSTS.search(template):
            body = None
        else:
            assert (method, template) in BODIES, f"add a valid body for {method} {template}"
            body = BODIES[(method, template)]
        response = await client.request(method, path, json=body, headers=other_account.headers)
        assert response.status_code == 404, f"{method} {template}: {response.status_code}"
        assert response.json()["error"]["code"] == "not_found"
    assert await _snapshot(client, account, owned) == before


async def test_lists_never_show_another_accounts_rows(
    client: httpx.AsyncClient, db: Database, account: Account, other_account: Account
) -> None:
    owned = await _owned_resources(client, db, account)
    for path in ("/v1/contacts", "/v1/calls", "/v1/webhooks", "/v1/events"):
        listed = (await client.get(path, headers=other_account.headers)).json()
        assert listed == [], path
    found = await client.get(
        "/v1/contacts", params={"phone_number": "+14155552671"}, headers=other_account.headers
    )
    assert found.json() == []
    assert owned["contact_id"]
