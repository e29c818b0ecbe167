"""A replay is authorised like a fresh request, on every POST route the app has.

The routes are read from the app itself: a new POST route fails
``test_every_post_route_has_a_recipe`` until it gets a recipe here, and then runs every check
below. For each route, account A makes the request with an ``Idempotency-Key`` and gets it
replayed; the same key and body then come from a key of A lacking the route's scope, a key of A
with only ``contacts:read``, a revoked key of A, and a key of account B. Each gets what it would
get without the header (403, 403, 401, B's own result), never A's stored response.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from hookline.app import create_app
from hookline.domain import keys
from hookline.storage.db import Database
from tests.conftest import Account, make_settings, new_account
from tests.support.fanout import fan_out_everything
from tests.support.routes import http_routes

CONTACT = {"first_name": "Ada", "phone_number": "+14155550100"}


@dataclass(frozen=True)
class Post:
    url: str
    body: dict[str, Any] | None = None


Recipe = Callable[[httpx.AsyncClient, Account, Database], Awaitable[Post]]


async def _created(client: httpx.AsyncClient, owner: Account, url: str, body: Any) -> Any:
    response = await client.post(url, json=body, headers=owner.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def _webhook(client: httpx.AsyncClient, owner: Account) -> Any:
    body = {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]}
    return await _created(client, owner, "/v1/webhooks", body)


async def create_contact(_c: httpx.AsyncClient, _o: Account, _db: Database) -> Post:
    return Post("/v1/contacts", CONTACT)


async def start_call(_c: httpx.AsyncClient, _o: Account, _db: Database) -> Post:
    return Post("/v1/calls", {"call_type": "inbound", "customer_phone_number": "+14155550100"})


async def complete_call(client: httpx.AsyncClient, owner: Account, _db: Database) -> Post:
    call = await _created(client, owner, "/v1/calls", (await start_call(client, owner, _db)).body)
    return Post(f"/v1/calls/{call['id']}/complete", {"call_status": "completed"})


async def analyse_call(client: httpx.AsyncClient, owner: Account, db: Database) -> Post:
    completing = await complete_call(client, owner, db)
    completed = await client.post(completing.url, json=completing.body, headers=owner.headers)
    assert completed.status_code == 200, completed.text
    return Post(completing.url.replace("/complete", "/analysis"), {"budget": 5})


async def upsert_contacts(_c: httpx.AsyncClient, _o: Account, _db: Database) -> Post:
    return Post("/v1/contacts/bulk", {"match_on": "phone_number", "contacts": [CONTACT]})


async def erase_contact(client: httpx.AsyncClient, owner: Account, _db: Database) -> Post:
    contact = await _created(client, owner, "/v1/contacts", CONTACT)
    return Post(f"/v1/contacts/{contact['id']}/erase")


async def create_webhook(_c: httpx.AsyncClient, _o: Account, _db: Database) -> Post:
    return Post("/v1/webhooks", {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]})


async def rotate_secret(client: httpx.AsyncClient, owner: Account, _db: Database) -> Post:
    webhook = await _webhook(client, owner)
    return Post(f"/v1/webhooks/{webhook['id']}/rotate-secret")


async def send_test_event(client: httpx.AsyncClient, owner: Account, _db: Database) -> Post:
    webhook = await _webhook(client, owner)
    return Post(f"/v1/webhooks/{webhook['id']}/test")


async def check_receiver(client: httpx.AsyncClient, owner: Account, _db: Database) -> Post:
    webhook = await _webhook(client, owner)  # nothing listens there: the probes fail fast
    return Post(f"/v1/webhooks/{webhook['id']}/conformance")


async def retry_delivery(client: httpx.AsyncClient, owner: Account, db: Database) -> Post:
    webhook = await _webhook(client, owner)
    await _created(client, owner, "/v1/contacts", CONTACT)
    await fan_out_everything(db)  # no worker runs here
    listed = await client.get(f"/v1/webhooks/{webhook['id']}/deliveries", headers=owner.headers)
    [delivery] = listed.json()
    return Post(f"/v1/webhooks/{webhook['id']}/deliveries/{delivery['id']}/retry")


async def recover(client: httpx.AsyncClient, owner: Account, _db: Database) -> Post:
    webhook = await _webhook(client, owner)
    return Post(f"/v1/webhooks/{webhook['id']}/recover", {"since": webhook["created_at"]})


# route path -> (the scope it needs, how to make one successful request to it)
RECIPES: dict[str, tuple[str, Recipe]] = {
    "/v1/contacts": ("contacts:write", create_contact),
    "/v1/calls": ("calls:write", start_call),
    "/v1/calls/{call_id}/complete": ("calls:write", complete_call),
    "/v1/calls/{call_id}/analysis": ("calls:write", analyse_call),
    "/v1/contacts/bulk": ("contacts:write", upsert_contacts),
    "/v1/contacts/{contact_id}/erase": ("contacts:write", erase_contact),
    "/v1/webhooks": ("webhooks:write", create_webhook),
    "/v1/webhooks/{webhook_id}/rotate-secret": ("webhooks:write", rotate_secret),
    "/v1/webhooks/{webhook_id}/test": ("webhooks:write", send_test_event),
    "/v1/webhooks/{webhook_id}/conformance": ("webhooks:write", check_receiver),
    "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry": ("webhooks:write", retry_delivery),
    "/v1/webhooks/{webhook_id}/recover": ("webhooks:write", recover),
}


# The app's routes, without starting it (no database is opened).
POST_ROUTES = sorted(
    route.path
    for route in http_routes(create_app(make_settings("sqlite:///unused.db")))
    if route.method == "POST" and route.path.startswith("/v1/")
)


def test_every_post_route_has_a_recipe() -> None:
    assert POST_ROUTES, "no POST route found: the enumeration is broken"
    missing = set(POST_ROUTES) - set(RECIPES)
    assert not missing, f"add a recipe for the new POST route(s) {sorted(missing)}"
    assert set(RECIPES) <= set(POST_ROUTES), "a recipe names a route that no longer exists"


async def _key(db: Database, owner: Account, scopes: list[str], *, revoked: bool = False) -> str:
    async with db.begin() as conn:
        key, record = await keys.create_key(conn, owner.id, "idempotency-test", scopes)
        if revoked:
            assert await keys.revoke_key(conn, owner.id, record["id"])
    return key


async def _send(client: httpx.AsyncClient, post: Post, bearer: str, key: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}", "Idempotency-Key": key}
    return await client.post(post.url, json=post.body, headers=headers)


def _leaks(response: httpx.Response, first: httpx.Response, post: Post) -> bool:
    """Whether ``response`` shows anything of ``first``'s stored body (its new id, its secret;
    an id the request's own path names may be quoted in its 404)."""
    stored = first.json()
    markers = [str(stored[name]) for name in ("id", "secret", "event_id") if name in stored]
    shown = [m for m in markers if m not in post.url and m in response.text]
    return "idempotent-replayed" in response.headers or bool(shown)


@pytest.mark.parametrize("route", POST_ROUTES)
async def test_a_replay_is_authorised_like_a_fresh_request(
    route: str, client: httpx.AsyncClient, db: Database
) -> None:
    owner = await new_account(db, "owner")
    scope, recipe = RECIPES[route]
    post = await recipe(client, owner, db)
    idempotency_key = f"auth-{uuid.uuid4()}"

    first = await _send(client, post, owner.key, idempotency_key)
    assert first.status_code in (200, 201, 202), first.text
    replay = await _send(client, post, owner.key, idempotency_key)
    assert replay.headers.get("idempotent-replayed") == "true", f"{route} is not idempotent"
    assert replay.content == first.content

    lacking = [s for s in keys.SCOPES if s != scope]
    refused = {
        "lacking the scope": (await _key(db, owner, lacking), 403, "forbidden"),
        "contacts:read only": (await _key(db, owner, ["contacts:read"]), 403, "forbidden"),
        "revoked": (await _key(db, owner, list(keys.SCOPES), revoked=True), 401, "unauthenticated"),
    }
    for case, (bearer, status, code) in refused.items():
        response = await _send(client, post, bearer, idempotency_key)
        assert response.status_code == status, (case, response.text)
        assert response.json()["error"]["code"] == code, case
        assert not _leaks(response, first, post), case

    other = await new_account(db, "other")
    theirs = await _send(client, post, other.key, idempotency_key)
    assert not _leaks(theirs, first, post)
    if "{" in route:  # the owner's resource: another account's id is a 404
        assert theirs.status_code == 404, theirs.text
    else:  # the other account's own first request with this key
        assert theirs.status_code == first.status_code, theirs.text
