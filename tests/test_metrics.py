"""/metrics: request metrics by route template, delivery queue gauges read from the database."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
from sqlalchemy import delete, insert

from hookline.delivery.manager import dispatch_events
from hookline.storage.db import Database
from hookline.storage.models import workers
from hookline.timeutil import utcnow
from tests.conftest import Account


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text format (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{key}="{value}"' in line for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def scrape(client: httpx.AsyncClient) -> str:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


async def test_requests_are_counted_by_route_template(
    client: httpx.AsyncClient, account: Account
) -> None:
    created = await client.post(
        "/v1/contacts",
        json={"first_name": "Ada", "phone_number": "+14155550100"},
        headers=account.headers,
    )
    contact_id = created.json()["id"]
    labels = {"method": "GET", "route": "/v1/contacts/{contact_id}", "status": "200"}
    before = sample(await scrape(client), "hookline_http_requests_total", **labels)
    assert (await client.get(f"/v1/contacts/{contact_id}", headers=account.headers)).is_success
    await client.get("/v1/no-such-thing/123", headers=account.headers)
    text = await scrape(client)
    assert sample(text, "hookline_http_requests_total", **labels) == before + 1
    assert sample(text, "hookline_http_request_duration_seconds_count", **labels) == before + 1
    assert contact_id not in text  # raw paths never become labels
    assert "/v1/no-such-thing" not in text
    assert sample(text, "hookline_http_requests_total", route="unmatched", status="404") >= 1


async def test_queue_depth_and_worker_heartbeats_come_from_the_database(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    webhook = await client.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        headers=account.headers,
    )
    assert webhook.status_code == 201
    before = sample(await scrape(client), "hookline_delivery_queue_depth")
    await client.post(
        "/v1/contacts",
        json={"first_name": "Ada", "phone_number": "+14155550100"},
        headers=account.headers,
    )
    await dispatch_events(db, now=utcnow())
    now = utcnow()
    async with db.begin() as conn:
        await conn.execute(
            insert(workers).values(
                id="wrk_metrics_test", hostname="h", pid=1,
                started_at=now, heartbeat_at=now - timedelta(seconds=30),
            )
        )  # fmt: skip
    try:
        text = await scrape(client)
    finally:
        async with db.begin() as conn:
            await conn.execute(delete(workers).where(workers.c.id == "wrk_metrics_test"))
    assert sample(text, "hookline_delivery_queue_depth") >= before + 1
    assert sample(text, "hookline_delivery_oldest_pending_age_seconds") >= 0
    age = sample(text, "hookline_worker_heartbeat_age_seconds", worker="wrk_metrics_test")
    assert 29 <= age <= 120
    assert re.search(r"^hookline_deliveries_total", text, re.M) or "hookline_deliveries" in text
    assert "hookline_delivery_attempt_duration_seconds" in text
