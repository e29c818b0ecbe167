"""Crash test: a ``hookline serve`` SIGKILLed between the batches of an idempotent 1,000-row
``POST /v1/contacts/bulk``, restarted, and sent the same request with the same key: every row is
created or unchanged (none refused), the database holds each contact once, and a real receiver
(its webhooks sent by the restarted server) gets one ``contact.created`` per contact, none twice,
none missing. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from hookline.storage.db import Database
from hookline.storage.models import contacts
from tests.conftest import BACKENDS, TEST_SECRET_KEY, make_database_url, make_settings
from tests.support.api import collect_pages
from tests.support.receiver import Receiver
from tests.support.server import arun_cli, async_running_server
from tests.support.waiting import eventually

ROWS = 1000
MIDWAY = 100
"""Contacts committed before the kill: several batches in, many still to go."""
ENV = {
    "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
    "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    "HOOKLINE_RATE_LIMIT": "1000000/second",
}
BODY = {
    "match_on": "phone_number",
    "contacts": [{"first_name": f"P{n}", "phone_number": f"+1415555{n:04d}"} for n in range(ROWS)],
}
IMPORT = {"Idempotency-Key": "import-after-crash"}


async def count_contacts(db: Database) -> int:
    async with db.read() as conn:
        return int(await conn.scalar(select(func.count()).select_from(contacts)) or 0)


async def send_bulk(client: httpx.AsyncClient) -> httpx.Response:
    return await client.post("/v1/contacts/bulk", json=BODY, headers=IMPORT)


@pytest.mark.slow
@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_a_crash_between_batches_then_the_same_request_creates_each_contact_once(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = make_database_url(backend_name, tmp_path, request)
    env = {**ENV, "HOOKLINE_DATABASE_URL": url}
    assert (await arun_cli("migrate", env=env)).returncode == 0
    created = await arun_cli("accounts", "create", "bulk-crash", env=env)
    assert created.returncode == 0, created.stderr
    auth = {"Authorization": f"Bearer {json.loads(created.stdout)['api_key']}"}
    db = Database(make_settings(url))
    try:
        async with Receiver() as receiver:
            async with (
                # No delivery before the kill: one killed mid-delivery is sent again (at least
                # once, the same event id), which would blur what this test counts.
                async_running_server(env, worker=False) as first,
                httpx.AsyncClient(base_url=first.base_url, headers=auth, timeout=60) as client,
            ):
                hook = await client.post(
                    "/v1/webhooks", json={"url": receiver.url, "events": ["contact.created"]}
                )
                assert hook.status_code == 201, hook.text
                cut_off = asyncio.create_task(send_bulk(client))
                await eventually(
                    lambda: count_contacts(db),
                    lambda count: count >= MIDWAY,
                    within=30,
                    what="some batches committed",
                )
                await asyncio.to_thread(first.kill)
                with pytest.raises(httpx.TransportError):
                    await cut_off
            committed = await count_contacts(db)
            assert 0 < committed < ROWS, "the kill did not fall between two batches"

            async with (
                async_running_server(env) as second,
                httpx.AsyncClient(base_url=second.base_url, headers=auth, timeout=60) as client,
            ):
                retried = await send_bulk(client)
                assert retried.status_code == 200, retried.text
                results = retried.json()["results"]
                assert len(results) == ROWS
                assert Counter(r["status"] for r in results) == Counter(
                    {"unchanged": committed, "created": ROWS - committed}
                )
                await receiver.wait_until(
                    lambda got: len({r.json()["data"]["id"] for r in got}) >= ROWS,
                    timeout=120,
                    description="a contact.created per contact",
                )
                # Every delivery is done, so no late duplicate can still be on its way.
                deliveries = f"/v1/webhooks/{hook.json()['id']}/deliveries?limit=100"
                await eventually(
                    lambda: collect_pages(client, deliveries + "&status=succeeded", {}),
                    lambda found: len(found[0]) == ROWS,
                    within=60,
                    interval=0.2,
                    what="every delivery succeeded",
                )
        assert await count_contacts(db) == ROWS
    finally:
        await db.dispose()
    ids = {r["id"] for r in results}
    bodies = [r.json() for r in receiver.requests]
    assert Counter(b["data"]["id"] for b in bodies) == Counter({i: 1 for i in ids})
    assert len({b["id"] for b in bodies}) == ROWS
    assert {b["type"] for b in bodies} == {"contact.created"}
