"""Recovery, alerts and statistics end to end: the in-process worker, real receivers, verified
with ``standardwebhooks``, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import false, func, select
from standardwebhooks import Webhook

from hookline.app import create_app
from hookline.domain import recovery
from hookline.storage.models import events
from hookline.timeutil import iso, utcnow
from tests.conftest import Account, make_database_url, make_settings, new_account
from tests.support.receiver import Receiver, RecordedRequest
from tests.support.waiting import eventually

# Two attempts, 0.2 s apart, then the delivery fails: outages and exhaustion in seconds.
RETRY_SCHEDULE = "0.2"


@pytest.fixture(scope="module")
async def worker_app(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[FastAPI]:
    url = make_database_url(backend, tmp_path_factory.mktemp("operations"), request)
    settings = make_settings(
        url, worker_in_process=True, retry_schedule=RETRY_SCHEDULE, delivery_poll_seconds=0.2
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


async def _subscribe(
    http: httpx.AsyncClient, owner: Account, url: str, events: list[str]
) -> dict[str, Any]:
    response = await http.post(
        "/v1/webhooks", json={"url": url, "events": events}, headers=owner.headers
    )
    assert response.status_code == 201, response.text
    webhook: dict[str, Any] = response.json()
    return webhook


async def _create_contact(http: httpx.AsyncClient, owner: Account, name: str) -> dict[str, Any]:
    response = await http.post(
        "/v1/contacts",
        json={"first_name": name, "phone_number": "+14155552671"},
        headers=owner.headers,
    )
    assert response.status_code == 201, response.text
    contact: dict[str, Any] = response.json()
    return contact


async def _deliveries(http: httpx.AsyncClient, owner: Account, webhook_id: str) -> Any:
    response = await http.get(
        f"/v1/webhooks/{webhook_id}/deliveries?limit=100", headers=owner.headers
    )
    assert response.status_code == 200, response.text
    return response.json()


async def _settled(
    http: httpx.AsyncClient, owner: Account, webhook_id: str, count: int
) -> list[dict[str, Any]]:
    """The webhook's deliveries once there are ``count`` and none is pending."""
    rows: list[dict[str, Any]] = await eventually(
        lambda: _deliveries(http, owner, webhook_id),
        lambda rows: len(rows) == count and all(r["status"] != "pending" for r in rows),
        within=20,
    )
    return rows


async def _all_dispatched(app: FastAPI, owner: Account) -> None:
    async def undispatched() -> int:
        async with app.state.db.read() as conn:
            query = select(func.count()).where(
                events.c.account_id == owner.id, events.c.dispatched == false()
            )
            return int(await conn.scalar(query) or 0)

    await eventually(undispatched, lambda n: n == 0)


def _verified(secret: str, requests: list[RecordedRequest]) -> list[dict[str, Any]]:
    """Each request's body, verified as Standard Webhooks (raises on a bad signature)."""
    return [Webhook(secret).verify(r.body, r.headers) for r in requests]


async def _recover(
    http: httpx.AsyncClient, owner: Account, webhook_id: str, **body: Any
) -> httpx.Response:
    return await http.post(f"/v1/webhooks/{webhook_id}/recover", json=body, headers=owner.headers)


async def test_an_outage_then_recover_delivers_every_event_exactly_once_more(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    started = iso(utcnow() - timedelta(seconds=1))
    async with Receiver() as receiver:
        receiver.respond(500)
        webhook = await _subscribe(http, owner, receiver.url, ["contact.created"])
        hook_id = webhook["id"]
        failed = [await _create_contact(http, owner, f"Down {i}") for i in range(3)]
        rows = await _settled(http, owner, hook_id, 3)
        assert {r["status"] for r in rows} == {"failed"}
        # Then the webhook is off for a while: events then are missed, not queued.
        off = await http.patch(
            f"/v1/webhooks/{hook_id}", json={"is_active": False}, headers=owner.headers
        )
        assert off.status_code == 200
        missed = [await _create_contact(http, owner, f"Off {i}") for i in range(2)]
        await _all_dispatched(worker_app, owner)  # fanned out while the webhook was off
        on = await http.patch(
            f"/v1/webhooks/{hook_id}", json={"is_active": True}, headers=owner.headers
        )
        assert on.status_code == 200
        assert len(await _deliveries(http, owner, hook_id)) == 3

        # Healthy again; a contact created now is delivered normally.
        receiver.respond(204)
        healthy = await _create_contact(http, owner, "Back")
        await _settled(http, owner, hook_id, 4)
        before = len(receiver.requests)

        response = await _recover(http, owner, hook_id, since=started)
        assert response.status_code == 202, response.text
        assert response.json() == {"queued": 5}
        rows = await _settled(http, owner, hook_id, 6)
        assert {r["status"] for r in rows} == {"succeeded"}

        again = await _recover(http, owner, hook_id, since=started)
        assert again.json() == {"queued": 0}
        await _settled(http, owner, hook_id, 6)
        recovered = receiver.requests[before:]
        payloads = _verified(webhook["secret"], recovered)

    # Exactly the failed and the missed events, each once; the healthy one not again.
    assert len(recovered) == 5
    assert sorted(p["data"]["id"] for p in payloads) == sorted(c["id"] for c in failed + missed)
    assert healthy["id"] not in {p["data"]["id"] for p in payloads}
    # A recovered failure is the same delivery: the same webhook-id as its first attempts.
    ids_by_contact = Counter(
        (r.headers["webhook-id"], p["data"]["id"])
        for r, p in zip(
            receiver.requests, _verified(webhook["secret"], receiver.requests), strict=True
        )
    )
    for contact in failed:
        attempts = [n for (_, cid), n in ids_by_contact.items() if cid == contact["id"]]
        assert attempts == [3]  # two failed attempts and the recovered one, one webhook-id


async def test_recover_refuses_what_it_cannot_do(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    webhook = await _subscribe(http, owner, "http://127.0.0.1:9/hook", ["contact.created"])
    hook_id = webhook["id"]
    now = utcnow()

    async def fields(**body: Any) -> list[str]:
        response = await _recover(http, owner, hook_id, **body)
        assert response.status_code == 422, response.text
        return [f["field"] for f in response.json()["error"]["details"]["fields"]]

    assert "since" in await fields(since=iso(now - timedelta(days=31)))
    assert "until" in await fields(since=iso(now), until=iso(now - timedelta(hours=1)))
    assert "since" in await fields(since=iso(now + timedelta(hours=1)))
    assert "since" in await fields(since="2026-11-22T10:00:00")  # no zone
    assert "until" in await fields(since=iso(now), until="9998-12-31T23:59:59-01:00")
    assert "since" in await fields(since="1970-01-01T00:00:00+01:00")  # before 1970 in UTC
    assert "since" in await fields(since="2026-11-22T10:00:00Z\x00")
    assert "since" in await fields(since=True)
    assert "since" in await fields()
    assert "limit" in await fields(since=iso(now), limit=5)

    other = await new_account(worker_app.state.db, "other")
    assert (await _recover(http, other, hook_id, since=iso(now))).status_code == 404
    assert (await _recover(http, owner, "wh-nope", since=iso(now))).status_code == 404
    await http.patch(f"/v1/webhooks/{hook_id}", json={"is_active": False}, headers=owner.headers)
    inactive = await _recover(http, owner, hook_id, since=iso(now))
    assert inactive.status_code == 409
    assert inactive.json()["error"]["code"] == "conflict"


async def test_a_key_without_webhooks_write_cannot_recover(
    http: httpx.AsyncClient, worker_app: FastAPI
) -> None:
    db = worker_app.state.db
    from hookline.domain import keys

    async with db.begin() as conn:
        account_id = await keys.create_account(conn, "scoped")
        full, _ = await keys.create_key(conn, account_id, "full", None)
        read_only, _ = await keys.create_key(conn, account_id, "ro", ["webhooks:read"])
    owner = Account(account_id, full)
    webhook = await _subscribe(http, owner, "http://127.0.0.1:9/hook", ["contact.created"])
    response = await http.post(
        f"/v1/webhooks/{webhook['id']}/recover",
        json={"since": iso(utcnow())},
        headers={"Authorization": f"Bearer {read_only}"},
    )
    assert response.status_code == 403
    stats = await http.get(
        f"/v1/webhooks/{webhook['id']}/stats", headers={"Authorization": f"Bearer {read_only}"}
    )
    assert stats.status_code == 200


async def test_a_410_disables_the_webhook_and_alerts_another_subscribed_endpoint(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as gone, Receiver() as watcher:
        gone.respond(410)
        doomed = await _subscribe(http, owner, gone.url, ["contact.created", "webhook.disabled"])
        alerts = await _subscribe(http, owner, watcher.url, ["webhook.disabled"])
        await _create_contact(http, owner, "Gone")
        [request] = await watcher.wait_for(1)
        [payload] = _verified(alerts["secret"], [request])
        await _settled(http, owner, alerts["id"], 1)
        await _settled(http, owner, doomed["id"], 1)

        assert payload["type"] == "webhook.disabled"
        assert payload["data"]["id"] == doomed["id"]
        assert payload["data"]["is_active"] is False
        assert payload["data"]["secret"] == "whsec_********"
        assert "410" in payload["data"]["disabled_reason"]
        event = await http.get(f"/v1/events/{payload['id']}", headers=owner.headers)
        assert event.status_code == 200 and event.json()["data"] == payload["data"]
        # One alert, and never to the webhook it is about.
        assert len(watcher.requests) == 1
        assert [r.json()["type"] for r in gone.requests] == ["contact.created"]
        # It stays out of a recovery of that webhook too.
        await http.patch(
            f"/v1/webhooks/{doomed['id']}", json={"is_active": True}, headers=owner.headers
        )
        recovered = await _recover(
            http, owner, doomed["id"], since=iso(utcnow() - timedelta(minutes=1))
        )
        assert recovered.json() == {"queued": 1}  # the contact.created, not its own alert


async def test_recover_applies_the_filter_and_the_alert_rule_as_the_fan_out_does(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    """Recovery gives a webhook exactly what the fan-out would: events its CEL filter (as it
    is now) passes, never an alert about itself; the dashboard's preview counts the same."""
    started = iso(utcnow() - timedelta(seconds=1))
    keep = 'event.type == "webhook.disabled" || event.data.first_name.startsWith("Keep")'
    async with Receiver() as receiver:
        receiver.respond(410)  # the first delivery disables the webhook: an alert about it
        response = await http.post(
            "/v1/webhooks",
            json={
                "url": receiver.url,
                "events": ["contact.created", "webhook.disabled"],
                "filter": keep,
            },
            headers=owner.headers,
        )
        assert response.status_code == 201, response.text
        webhook = response.json()
        first = await _create_contact(http, owner, "Keep first")
        await _settled(http, owner, webhook["id"], 1)
        kept = await _create_contact(http, owner, "Keep missed")
        dropped = await _create_contact(http, owner, "Drop missed")
        await _all_dispatched(worker_app, owner)
        assert not (await http.get(f"/v1/webhooks/{webhook['id']}", headers=owner.headers)).json()[
            "is_active"
        ]
        receiver.respond(204)
        on = await http.patch(
            f"/v1/webhooks/{webhook['id']}", json={"is_active": True}, headers=owner.headers
        )
        assert on.status_code == 200
        window = recovery.RecoveryWindow(utcnow() - timedelta(minutes=1), utcnow())
        async with worker_app.state.db.read() as conn:
            preview = await recovery.count_recoverable(conn, owner.id, webhook["id"], window)
        assert preview == 2

        recovered = await _recover(http, owner, webhook["id"], since=started)
        assert recovered.json() == {"queued": 2}  # the failed one again, the kept one missed
        await _settled(http, owner, webhook["id"], 2)
        payloads = _verified(webhook["secret"], await receiver.wait_for(3))
        delivered = sorted(p["data"]["id"] for p in payloads)
        assert delivered == sorted([first["id"], first["id"], kept["id"]])

        # The filter as it is now decides: widened, the dropped contact is owed; the alert
        # about the webhook itself never is.
        widened = await http.patch(
            f"/v1/webhooks/{webhook['id']}", json={"filter": "true"}, headers=owner.headers
        )
        assert widened.status_code == 200
        again = await _recover(http, owner, webhook["id"], since=started)
        assert again.json() == {"queued": 1}
        payloads = _verified(webhook["secret"], await receiver.wait_for(4))
    assert payloads[-1]["data"]["id"] == dropped["id"]
    assert all(p["type"] == "contact.created" for p in payloads)


async def test_a_deliverys_last_failed_attempt_fires_delivery_exhausted(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as failing, Receiver() as watcher:
        failing.respond(500)
        source = await _subscribe(
            http, owner, failing.url, ["contact.created", "delivery.exhausted"]
        )
        alerts = await _subscribe(http, owner, watcher.url, ["delivery.exhausted"])
        await _create_contact(http, owner, "Unlucky")
        [delivery] = await _settled(http, owner, source["id"], 1)
        [request] = await watcher.wait_for(1)
        [payload] = _verified(alerts["secret"], [request])
        await _settled(http, owner, alerts["id"], 1)

    assert delivery["status"] == "failed" and delivery["attempts"] == 2
    assert payload["type"] == "delivery.exhausted"
    assert payload["data"] == delivery
    assert len(watcher.requests) == 1
    # The failing endpoint subscribes to delivery.exhausted, but not to its own.
    assert [r.json()["type"] for r in failing.requests] == ["contact.created"] * 2


async def test_stats_count_the_windows_attempts(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    async with Receiver() as receiver:
        receiver.script([500, 503])  # two first attempts fail; their retries succeed
        webhook = await _subscribe(http, owner, receiver.url, ["contact.created"])
        for i in range(3):
            await _create_contact(http, owner, f"Stat {i}")
        await _settled(http, owner, webhook["id"], 3)

    response = await http.get(f"/v1/webhooks/{webhook['id']}/stats", headers=owner.headers)
    assert response.status_code == 200, response.text
    stats = response.json()
    assert stats["webhook_id"] == webhook["id"]
    assert stats["attempts"] == 5 and stats["succeeded"] == 3 and stats["failed"] == 2
    assert stats["success_rate"] == 0.6
    assert stats["status_codes"] == {"204": 3, "500": 1, "503": 1}
    assert stats["pending"] == 0
    latency = stats["latency_ms"]
    assert 0 <= latency["p50"] <= latency["p95"] <= latency["p99"]

    before = iso(utcnow() - timedelta(days=2))
    empty = await http.get(
        f"/v1/webhooks/{webhook['id']}/stats",
        params={"since": before, "until": iso(utcnow() - timedelta(days=1))},
        headers=owner.headers,
    )
    assert empty.status_code == 200
    assert empty.json()["attempts"] == 0 and empty.json()["success_rate"] is None
    assert empty.json()["latency_ms"] == {"p50": None, "p95": None, "p99": None}

    for params in ({"since": "yesterday"}, {"since": iso(utcnow() - timedelta(days=40))}):
        bad = await http.get(
            f"/v1/webhooks/{webhook['id']}/stats", params=params, headers=owner.headers
        )
        assert bad.status_code == 422, bad.text
    other = await new_account(worker_app.state.db, "stranger")
    hidden = await http.get(f"/v1/webhooks/{webhook['id']}/stats", headers=other.headers)
    assert hidden.status_code == 404


async def test_recover_is_idempotent_with_a_key(http: httpx.AsyncClient, owner: Account) -> None:
    webhook = await _subscribe(http, owner, "http://127.0.0.1:9/hook", ["contact.created"])
    url = f"/v1/webhooks/{webhook['id']}/recover"
    body = {"since": iso(utcnow() - timedelta(minutes=5))}
    headers = {**owner.headers, "Idempotency-Key": "recover-1"}
    first = await http.post(url, json=body, headers=headers)
    replay = await http.post(url, json=body, headers=headers)
    assert first.status_code == replay.status_code == 202
    assert replay.json() == first.json() and replay.headers["idempotent-replayed"] == "true"
    other = await http.post(url, json={"since": iso(utcnow())}, headers=headers)
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
