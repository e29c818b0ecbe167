"""The API's latency while ``POST /v1/webhooks/{id}/recover`` queues 100,000 deliveries.

    .venv/bin/python -m bench.recover_latency [--events 100000] [--database-url URL]

Seeds one account with ``--events`` dispatched ``contact.created`` events that a webhook missed
(it subscribes to them but has no delivery), then, in one process as ``hookline serve`` runs it
(the worker off, so only the API's own work is measured), times ``POST /v1/contacts`` alone and
while the recovery runs, and the recovery itself. Without ``--database-url``: a SQLite file in a
temporary directory (its single writer is the worst case). A targeted measurement, not part of
``make bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert, update

from hookline.app import create_app
from hookline.domain import keys
from hookline.domain.events import event_row
from hookline.settings import Settings
from hookline.storage.models import events
from hookline.timeutil import iso, utcnow

SEED_CHUNK = 10_000
BASELINE_REQUESTS = 300


def _summary(took: list[float]) -> str:
    ordered = sorted(took)
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    return (
        f"n={len(took)} p50 {statistics.median(took):.1f} ms, p99 {p99:.1f} ms, "
        f"max {ordered[-1]:.1f} ms"
    )


async def _post_contact(http: httpx.AsyncClient, headers: dict[str, str]) -> float:
    began = time.perf_counter()
    response = await http.post(
        "/v1/contacts", json={"first_name": "Bench", "phone_number": "+14155552671"},
        headers=headers,
    )  # fmt: skip
    assert response.status_code == 201, response.text
    return (time.perf_counter() - began) * 1000


async def _seed(app: Any, count: int) -> tuple[dict[str, str], str]:
    db = app.state.db
    async with db.begin() as conn:
        account = await keys.create_account(conn, "bench")
        key, _ = await keys.create_key(conn, account, "bench", None)
    headers = {"Authorization": f"Bearer {key}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
        created = await http.post(
            "/v1/webhooks",
            json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
            headers=headers,
        )
    hook = created.json()["id"]
    for offset in range(0, count, SEED_CHUNK):
        rows = [
            event_row(account, "contact.created", {"first_name": f"Missed {offset + i}"})
            for i in range(min(SEED_CHUNK, count - offset))
        ]
        async with db.begin() as conn:
            await conn.execute(insert(events), rows)
    async with db.begin() as conn:  # as if fanned out while the webhook was disabled
        await conn.execute(
            update(events).where(events.c.account_id == account).values(dispatched=True)
        )
    return headers, hook


async def main(database_url: str, count: int) -> None:
    settings = Settings(
        database_url=database_url, secret_key="bench", worker_in_process=False,
        allow_private_targets=True, rate_limit="1000000/second",
    )  # fmt: skip
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        since = iso(utcnow() - timedelta(minutes=1))
        headers, hook = await _seed(app, count)
        print(f"seeded {count:,} missed events ({database_url})")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            alone = [await _post_contact(http, headers) for _ in range(BASELINE_REQUESTS)]
            print(f"POST /v1/contacts alone:            {_summary(alone)}")

            began = time.perf_counter()
            recovery = asyncio.create_task(
                http.post(f"/v1/webhooks/{hook}/recover", json={"since": since}, headers=headers)
            )
            during = []
            while not recovery.done():
                during.append(await _post_contact(http, headers))
            response = await recovery
            took = time.perf_counter() - began
        print(f"POST /v1/contacts during recovery:  {_summary(during)}")
        print(f"recover: {response.status_code} {response.json()} in {took:.1f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = args.database_url or f"sqlite:///{Path(directory) / 'recover.db'}"
        asyncio.run(main(url, args.events))
