"""Erasing a contact (POST /v1/contacts/{id}/erase, GET /v1/erasures/{id}) with the in-process
worker and a real receiver, on both databases: the data is gone from the database's own files
(SQLite) or every row (PostgreSQL), and the receiver is told what to purge."""

from __future__ import annotations

import sqlite3
from typing import Any

import asyncpg
import httpx
from fastapi import FastAPI
from sqlalchemy import func, select
from standardwebhooks import Webhook

from hookline.settings import Settings
from hookline.storage.models import delivery_attempts
from hookline.storage.statements import Query
from tests.conftest import Account, new_account
from tests.support.receiver import Receiver
from tests.support.waiting import eventually

NAME = "Zephyrinaquell"
PHONE = "+14155550199"
EMAIL = "zephy.erasable@example.org"
TRANSCRIPT = "Caller: this is Zephyrinaquell speaking"
UPDATES = 120
_COUNT_ATTEMPTS = Query(
    select(func.count()).select_from(delivery_attempts)
)  # with the creation and the call's events, a few hundred events and attempts


async def _post(
    http: httpx.AsyncClient, owner: Account, path: str, body: Any, **headers: str
) -> Any:
    response = await http.post(path, json=body, headers={**owner.headers, **headers})
    assert response.status_code in (200, 201, 202), response.text
    return response.json()


async def _subscribe(http: httpx.AsyncClient, owner: Account, url: str, events: list[str]) -> Any:
    return await _post(http, owner, "/v1/webhooks", {"url": url, "events": events})


async def _make_history(http: httpx.AsyncClient, owner: Account) -> tuple[str, str]:
    contact = await _post(
        http,
        owner,
        "/v1/contacts",
        {"first_name": NAME, "phone_number": PHONE, "email": EMAIL},
        **{"Idempotency-Key": "create-zephy"},
    )
    for n in range(UPDATES):
        response = await http.patch(
            f"/v1/contacts/{contact['id']}",
            json={"notes": f"{NAME} note {n}"},
            headers=owner.headers,
        )
        assert response.status_code == 200
    call = await _post(
        http,
        owner,
        "/v1/calls",
        {"call_type": "inbound", "customer_phone_number": PHONE, "contact_id": contact["id"]},
        **{"Idempotency-Key": "call-zephy"},
    )
    await _post(
        http,
        owner,
        f"/v1/calls/{call['id']}/complete",
        {"call_status": "completed", "analysis": {"transcript": TRANSCRIPT, "summary": EMAIL}},
    )
    return contact["id"], call["id"]


async def _attempts(app: FastAPI) -> int:
    async with app.state.db.read() as conn:
        return int(await conn.scalar(_COUNT_ATTEMPTS))


async def _stored_text(settings: Settings) -> bytes:
    """Everything the database holds: SQLite's files (after emptying the WAL into the file),
    or on PostgreSQL every row of every table as text."""
    path = settings.sqlite_path
    if path is not None:
        raw = sqlite3.connect(path)
        try:
            assert raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
        finally:
            raw.close()
        wal = path.with_name(path.name + "-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    conn = await asyncpg.connect(settings.database_url)
    try:
        tables = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        texts: list[str] = []
        for (table,) in tables:
            rows = await conn.fetch(f'SELECT t::text FROM "{table}" t')  # noqa: S608
            texts.extend(row[0] for row in rows)
        return "\n".join(texts).encode()
    finally:
        await conn.close()


async def test_erasure_reaches_every_table_and_the_receivers(
    worker_app: FastAPI, http: httpx.AsyncClient, owner: Account
) -> None:
    settings: Settings = worker_app.state.settings
    async with Receiver() as receiver, Receiver() as bystander:
        hook = await _subscribe(
            http,
            owner,
            receiver.url,
            ["contact.created", "contact.updated", "call.started", "call.completed"],
        )
        other = await _post(
            http, owner, "/v1/contacts", {"first_name": "Keptalina", "phone_number": "+14155550142"}
        )
        await receiver.wait_for(1, timeout=30)
        await eventually(lambda: _attempts(worker_app), lambda n: n >= 1, within=30)
        # The receiver echoes the person, so the attempts' response bodies hold the data too.
        receiver.respond(200, body=f'{{"echo": "{NAME} {PHONE} {EMAIL}"}}')
        contact_id, call_id = await _make_history(http, owner)
        expected = 1 + 1 + UPDATES + 2  # the other contact, creation, updates, call events
        await receiver.wait_for(expected, timeout=60)
        await eventually(lambda: _attempts(worker_app), lambda n: n >= expected, within=60)
        about = {
            r.headers["webhook-id"] for r in receiver.requests if NAME in r.text or PHONE in r.text
        }
        assert len(about) == expected - 1
        # Subscribed to the new event type only: told too, though it received nothing.
        watcher = await _subscribe(http, owner, bystander.url, ["contact.erased"])
        assert NAME.encode() in await _stored_text(settings)
        receiver.reset()  # what it answers from now on names nobody

        erased = await _post(http, owner, f"/v1/contacts/{contact_id}/erase", None)
        erasure_id = erased["erasure_id"]
        assert erasure_id.startswith("er_")
        gone = await http.get(f"/v1/contacts/{contact_id}", headers=owner.headers)
        assert gone.status_code == 404

        async def erasure() -> Any:
            response = await http.get(f"/v1/erasures/{erasure_id}", headers=owner.headers)
            assert response.status_code == 200, response.text
            return response.json()

        done = await eventually(
            erasure,
            lambda e: (
                e["status"] == "done" and all(w["status"] == "succeeded" for w in e["webhooks"])
            ),
            within=60,
        )
        assert done["contact_id"] == contact_id and done["finished_at"] is not None
        assert done["counts"]["events"] == expected - 1
        assert done["counts"]["calls"] == 1
        assert done["counts"]["deliveries"] == expected - 1
        assert done["counts"]["attempts"] == expected - 1
        assert done["counts"]["idempotent_responses"] == 2  # the contact's and the call's POSTs
        assert {w["webhook_id"] for w in done["webhooks"]} == {hook["id"], watcher["id"]}

        [notice] = [r for r in receiver.requests if r.json()["type"] == "contact.erased"]
        body = Webhook(hook["secret"]).verify(notice.body, notice.headers)
        assert body["data"] == {"contact_id": contact_id, "event_ids": sorted(about)}
        [told] = await bystander.wait_for(1, timeout=30)
        assert told.json()["data"] == {"contact_id": contact_id, "event_ids": []}
        for request in (notice, told):
            assert NAME not in request.text and PHONE not in request.text

        # The call stays, without the person; the other contact and its event are untouched.
        call = (await http.get(f"/v1/calls/{call_id}", headers=owner.headers)).json()
        assert call["customer_phone_number"] == "" and call["analysis"] is None
        assert call["contact_id"] is None
        kept = await http.get(f"/v1/contacts/{other['id']}", headers=owner.headers)
        assert kept.status_code == 200
        for event_id in about:
            response = await http.get(f"/v1/events/{event_id}", headers=owner.headers)
            assert response.status_code == 404

        stored = await _stored_text(settings)
        for needle in (NAME, PHONE, EMAIL, "Zephyrin", "zephy.erasable"):
            at = stored.find(needle.encode())
            assert at < 0, (needle, stored[max(0, at - 200) : at + 100])
        assert b"Keptalina" in stored

        again = await _post(http, owner, f"/v1/contacts/{contact_id}/erase", None)
        assert again == {"erasure_id": erasure_id}


async def test_a_deleted_contact_can_still_be_erased(
    worker_app: FastAPI, http: httpx.AsyncClient, owner: Account
) -> None:
    contact = await _post(
        http, owner, "/v1/contacts", {"first_name": "Delphina", "phone_number": "+14155550177"}
    )
    deleted = await http.delete(f"/v1/contacts/{contact['id']}", headers=owner.headers)
    assert deleted.status_code == 200
    erased = await _post(http, owner, f"/v1/contacts/{contact['id']}/erase", None)

    async def erasure() -> Any:
        path = f"/v1/erasures/{erased['erasure_id']}"
        return (await http.get(path, headers=owner.headers)).json()

    done = await eventually(erasure, lambda e: e["status"] == "done", within=30)
    assert done["counts"]["events"] == 2  # contact.created and contact.deleted
    assert b"Delphina" not in await _stored_text(worker_app.state.settings)


async def test_erasure_is_scoped_and_checked(
    worker_app: FastAPI, http: httpx.AsyncClient, owner: Account
) -> None:
    stranger = await new_account(worker_app.state.db, "stranger")
    theirs = await _post(
        http, stranger, "/v1/contacts", {"first_name": "Theirs", "phone_number": "+14155550111"}
    )
    erase = f"/v1/contacts/{theirs['id']}/erase"
    assert (await http.post(erase, headers=owner.headers)).status_code == 404
    unknown = "/v1/contacts/019a0000-0000-7000-8000-0000000000ff/erase"
    assert (await http.post(unknown, headers=owner.headers)).status_code == 404
    assert (
        await http.post("/v1/contacts/not-an-id/erase", headers=owner.headers)
    ).status_code == 404
    reader = await new_account(worker_app.state.db, "reader", ["contacts:read"])
    refused = await http.post(erase, headers=reader.headers)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "forbidden"
    mine = await _post(http, stranger, erase, None)
    others = await http.get(f"/v1/erasures/{mine['erasure_id']}", headers=owner.headers)
    assert others.status_code == 404
    for bad in ("er_xyz", "er_" + "0" * 31 + "%00", "x" * 500):
        response = await http.get(f"/v1/erasures/{bad}", headers=owner.headers)
        assert response.status_code == 404
    still = await http.get(f"/v1/contacts/{theirs['id']}", headers=stranger.headers)
    assert still.status_code == 404
