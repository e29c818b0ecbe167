"""Per-account retention with the in-process worker and a real receiver: the sweep deletes an
account's events, deliveries and attempts older than its own window and blanks its calls'
transcripts, leaving an account at the server's maximum alone; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from fastapi import FastAPI

from hookline.domain.retention import sweep
from hookline.timeutil import utcnow
from tests.api.conftest import http, owner, worker_app
from tests.conftest import Account, new_account
from tests.support.receiver import Receiver

__all__ = ["http", "owner", "worker_app"]


async def _contact_delivered(http: httpx.AsyncClient, who: Account, receiver: Receiver) -> str:
    body = {"first_name": "Ada", "phone_number": "+14155552671"}
    created = await http.post("/v1/contacts", json=body, headers=who.headers)
    assert created.status_code == 201, created.text
    contact_id = created.json()["id"]
    await receiver.wait_until(lambda got: any(r.json()["data"]["id"] == contact_id for r in got))
    return str(created.json()["id"])


async def _events(http: httpx.AsyncClient, who: Account) -> list[Any]:
    response = await http.get("/v1/events", headers=who.headers)
    assert response.status_code == 200, response.text
    return list(response.json())


async def test_an_account_keeps_its_data_for_its_own_window(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    other = await new_account(worker_app.state.db)
    short = await http.patch("/v1/account", json={"retention_days": 7}, headers=owner.headers)
    assert short.status_code == 200, short.text
    async with Receiver() as receiver:
        hooks = {}
        for who in (owner, other):
            made = await http.post(
                "/v1/webhooks",
                json={"url": receiver.url, "events": ["contact.created"]},
                headers=who.headers,
            )
            hooks[who.id] = made.json()["id"]
            await _contact_delivered(http, who, receiver)
    call = await http.post(
        "/v1/calls",
        json={"call_type": "inbound", "customer_phone_number": "+14155552671"},
        headers=owner.headers,
    )
    ended = await http.post(
        f"/v1/calls/{call.json()['id']}/complete",
        json={"call_status": "completed", "analysis": {"transcript": "Agent: Hi", "summary": "s"}},
        headers=owner.headers,
    )
    assert ended.status_code == 200, ended.text
    assert await _events(http, owner)
    db = worker_app.state.db
    max_days = worker_app.state.settings.retention_days
    # Within the window nothing goes.
    await sweep(db, max_days=max_days, now=utcnow() + timedelta(days=6))
    assert await _events(http, owner)
    await sweep(db, max_days=max_days, now=utcnow() + timedelta(days=7, seconds=1))
    assert await _events(http, owner) == []
    deliveries = await http.get(f"/v1/webhooks/{hooks[owner.id]}/deliveries", headers=owner.headers)
    assert deliveries.json() == []
    kept = await http.get(f"/v1/calls/{call.json()['id']}", headers=owner.headers)
    assert kept.json()["analysis"]["transcript"] is None
    assert kept.json()["analysis"]["summary"] == "s"
    # The other account keeps the server's maximum.
    assert len(await _events(http, other)) == 1
    theirs = await http.get(f"/v1/webhooks/{hooks[other.id]}/deliveries", headers=other.headers)
    assert len(theirs.json()) == 1
