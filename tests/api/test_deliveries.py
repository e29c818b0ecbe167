"""/v1/webhooks/{id}/deliveries, retry and test, with the in-process worker and a real receiver."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks import Webhook

from hookline.app import create_app
from tests.conftest import Account, make_database_url, make_settings
from tests.support.api import collect_pages
from tests.support.receiver import Receiver
from tests.support.waiting import eventually


@pytest.fixture(scope="module")
async def worker_app(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[FastAPI]:
    url = make_database_url(backend, tmp_path_factory.mktemp("deliveries"), request)
    # A long second retry keeps a failed delivery pending for the cancellation test.
    settings = make_settings(url, worker_in_process=True, retry_schedule="3600,3600")
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


async def _subscribe(http: httpx.AsyncClient, owner: Account, url: str) -> dict[str, Any]:
    response = await http.post(
        "/v1/webhooks",
        json={"url": url, "events": ["contact.created", "contact.updated"]},
        headers=owner.headers,
    )
    assert response.status_code == 201, response.text
    webhook: dict[str, Any] = response.json()
    return webhook


async def _create_contact(http: httpx.AsyncClient, owner: Account, name: str = "Ada") -> Any:
    response = await http.post(
        "/v1/contacts",
        json={"first_name": name, "phone_number": "+14155552671"},
        headers=owner.headers,
    )
    assert response.status_code == 201
    return response.json()


async def test_delivery_is_listed_with_its_attempt_and_can_be_retried(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        webhook = await _subscribe(http, owner, receiver.url)
        contact = await _create_contact(http, owner)
        [first] = await receiver.wait_for(1)
        payload = Webhook(webhook["secret"]).verify(first.body, first.headers)
        assert payload["data"] == contact

        base = f"/v1/webhooks/{webhook['id']}/deliveries"

        async def listed() -> Any:
            return (await http.get(base, headers=owner.headers)).json()

        [delivery] = await eventually(listed, lambda rows: rows[0]["status"] != "pending")
        assert delivery["event_id"] == first.headers["webhook-id"]
        assert delivery["event_type"] == "contact.created"
        assert delivery["status"] == "succeeded"
        assert delivery["attempts"] == 1 and delivery["last_status_code"] == 204

        detail = (await http.get(f"{base}/{delivery['id']}", headers=owner.headers)).json()
        [attempt] = detail["attempt_log"]
        assert attempt["status_code"] == 204 and attempt["succeeded"] is True
        assert attempt["duration_ms"] >= 0

        retried = await http.post(f"{base}/{delivery['id']}/retry", headers=owner.headers)
        assert retried.status_code == 202
        [_, again] = await receiver.wait_for(2)
        assert again.headers["webhook-id"] == first.headers["webhook-id"]

        missing = await http.get(f"{base}/dlv_nope", headers=owner.headers)
        assert missing.status_code == 404


async def test_deliveries_page_with_link(http: httpx.AsyncClient, owner: Account) -> None:
    async with Receiver() as receiver:
        webhook = await _subscribe(http, owner, receiver.url)
        for i in range(3):
            await _create_contact(http, owner, f"n{i}")
        await receiver.wait_for(3)
        url = f"/v1/webhooks/{webhook['id']}/deliveries?limit=2"
        seen, pages = await collect_pages(http, url, owner.headers)
        assert len(set(seen)) == 3
        assert pages == 2


async def test_test_event_goes_to_that_webhook_alone(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as target, Receiver() as bystander:
        webhook = await _subscribe(http, owner, target.url)
        await _subscribe(http, owner, bystander.url)
        response = await http.post(f"/v1/webhooks/{webhook['id']}/test", headers=owner.headers)
        assert response.status_code == 202
        [request] = await target.wait_for(1)
        payload = Webhook(webhook["secret"]).verify(request.body, request.headers)
        assert payload["type"] == "webhook.test"
        assert payload["id"] == response.json()["event_id"]
        await _create_contact(http, owner)  # a later event reaches both: the test went first
        await bystander.wait_for(1)
        assert [r.headers["webhook-id"] for r in bystander.requests] != [payload["id"]]


async def test_test_sends_count_against_the_rate_limit(
    http: httpx.AsyncClient, owner: Account
) -> None:
    """40 test sends at once to a webhook limited to 3 a second: 3 are taken, the others are
    429 with the second the window frees in; without a limit every one is taken."""
    async with Receiver() as receiver:
        body = {"url": receiver.url, "events": ["contact.created"], "rate_limit": 3}
        webhook = (await http.post("/v1/webhooks", json=body, headers=owner.headers)).json()
        url = f"/v1/webhooks/{webhook['id']}/test"
        began = time.monotonic()
        responses = await asyncio.gather(
            *(http.post(url, headers=owner.headers) for _ in range(40))
        )
        seconds = time.monotonic() - began
        taken = [response.status_code for response in responses].count(202)
        # Three a second: three when the burst fits in one (as it does unless the host is
        # very slow), else at most three for each second it spanned.
        assert taken == 3 if seconds < 1 else 3 <= taken <= 3 * math.ceil(seconds + 1), seconds
        refused = [response for response in responses if response.status_code != 202]
        assert len(refused) == 40 - taken
        for response in refused:
            assert (
                response.status_code == 429 and response.json()["error"]["code"] == "rate_limited"
            )
            assert response.headers["Retry-After"] in ("1", "2")  # a second, plus the margins
        await receiver.wait_for(taken)
        deliveries = f"/v1/webhooks/{webhook['id']}/deliveries"
        assert len((await http.get(deliveries, headers=owner.headers)).json()) == taken
        unlimited = await _subscribe(http, owner, receiver.url)
        url = f"/v1/webhooks/{unlimited['id']}/test"
        responses = await asyncio.gather(
            *(http.post(url, headers=owner.headers) for _ in range(10))
        )
        assert [response.status_code for response in responses] == [202] * 10


async def test_test_event_to_an_inactive_webhook_is_a_conflict(
    http: httpx.AsyncClient, owner: Account
) -> None:
    webhook = await _subscribe(http, owner, "http://127.0.0.1:9/never")
    await http.patch(
        f"/v1/webhooks/{webhook['id']}", json={"is_active": False}, headers=owner.headers
    )
    response = await http.post(f"/v1/webhooks/{webhook['id']}/test", headers=owner.headers)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


async def test_deactivating_cancels_pending_deliveries(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        receiver.respond(500)
        webhook = await _subscribe(http, owner, receiver.url)
        await _create_contact(http, owner)
        await receiver.wait_for(1)
        base = f"/v1/webhooks/{webhook['id']}/deliveries"

        async def status() -> tuple[str, int]:
            [delivery] = (await http.get(base, headers=owner.headers)).json()
            return delivery["status"], delivery["attempts"]

        # The failed attempt is recorded in the worker's next outcome batch.
        await eventually(status, lambda s: s == ("pending", 1))
        await http.patch(
            f"/v1/webhooks/{webhook['id']}", json={"is_active": False}, headers=owner.headers
        )
        assert (await status())[0] == "cancelled"
