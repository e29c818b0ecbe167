"""Crash test: a SIGKILLed ``hookline serve`` never strands an ``Idempotency-Key``.

Clients keep creating contacts with idempotent POSTs (each request its own key and body) while
the server is killed with SIGKILL several times and restarted on the same database. A request cut
off by a kill is retried with the same key and body until it gets an answer. Every request must end
with its one 201 (fresh, or the replay of the attempt that committed before the kill), no answer is
a lasting 409 (a key left "in progress"), and each contact exists exactly once. On SQLite and on
PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from hookline.storage.db import Database
from hookline.storage.models import idempotency_keys
from tests.conftest import BACKENDS, TEST_SECRET_KEY, make_database_url, make_settings
from tests.support.api import collect_pages
from tests.support.server import ServerProcess, arun_cli, async_running_server

KILLS = 3
# A 409 that lasts this long means a key was stranded "in progress".
LASTING = 5.0
CLIENTS = 16
ENV = {
    "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
    "HOOKLINE_RATE_LIMIT": "1000000/second",
    "HOOKLINE_LOG_LEVEL": "WARNING",
}


@dataclass
class Outcome:
    """What the client saw for one request, over all its attempts."""

    statuses: list[int | str] = field(default_factory=list)
    contact_id: str | None = None
    replayed: bool = False

    @property
    def interrupted(self) -> bool:
        return any(isinstance(status, str) for status in self.statuses)


class Service:
    """The current ``hookline serve``; ``ready`` is set while one is up."""

    def __init__(self, env: dict[str, str], stack: AsyncExitStack) -> None:
        self.env = env
        self.stack = stack
        self.ready = asyncio.Event()
        self.server: ServerProcess | None = None
        self.kills = 0

    async def start(self) -> None:
        self.server = await self.stack.enter_async_context(
            async_running_server(self.env, worker=False)
        )
        self.ready.set()

    async def crash_and_restart(self) -> None:
        assert self.server is not None
        self.ready.clear()
        await asyncio.to_thread(self.server.kill)
        self.kills += 1
        await self.start()

    def url(self, path: str) -> str:
        assert self.server is not None
        return self.server.base_url + path


async def _create_until_answered(
    client: httpx.AsyncClient, service: Service, body: dict[str, str], outcome: Outcome
) -> None:
    headers = {"Idempotency-Key": f"crash-{uuid.uuid4()}"}
    in_progress_since: float | None = None
    while True:
        await service.ready.wait()
        try:
            response = await client.post(service.url("/v1/contacts"), json=body, headers=headers)
        except httpx.TransportError as exc:  # the server died under the request
            outcome.statuses.append(type(exc).__name__)
            continue
        outcome.statuses.append(response.status_code)
        if response.status_code == 201:
            outcome.contact_id = response.json()["id"]
            outcome.replayed = response.headers.get("idempotent-replayed") == "true"
            return
        assert response.status_code in (409, 503), response.text  # else a bug here
        if response.status_code != 409:
            in_progress_since = None
            continue
        # 409 while the killed attempt's transaction is still being rolled back (PostgreSQL
        # notices the dead connection): fine for a moment, a stranded key if it lasts.
        now = time.monotonic()
        in_progress_since = in_progress_since or now
        assert now - in_progress_since < LASTING, f"a key stayed in progress: {response.text}"
        await asyncio.sleep(0.05)  # a client's retry interval


async def _chaos(service: Service) -> None:
    for _ in range(KILLS):
        await asyncio.sleep(random.uniform(0.3, 0.9))  # the kill cadence, not a wait
        await service.crash_and_restart()


@pytest.mark.slow
@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_sigkill_never_strands_an_idempotency_key(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = make_database_url(backend_name, tmp_path, request)
    env = {**ENV, "HOOKLINE_DATABASE_URL": url}
    assert (await arun_cli("migrate", env=env)).returncode == 0
    created = await arun_cli("accounts", "create", "idempotency-crash", env=env)
    assert created.returncode == 0, created.stderr
    auth = {"Authorization": f"Bearer {json.loads(created.stdout)['api_key']}"}
    run = uuid.uuid4().hex[:12]
    outcomes: list[Outcome] = []

    async with (
        AsyncExitStack() as stack,
        httpx.AsyncClient(headers=auth, timeout=30) as client,
    ):
        service = Service(env, stack)
        await service.start()
        chaos = asyncio.create_task(_chaos(service))

        async def keep_creating() -> None:
            while not chaos.done():
                outcome = Outcome()
                outcomes.append(outcome)
                body = {"first_name": f"n{len(outcomes)}", "last_name": run}
                await _create_until_answered(
                    client, service, {**body, "phone_number": "+14155552671"}, outcome
                )

        await asyncio.gather(chaos, *(keep_creating() for _ in range(CLIENTS)))
        listed, _pages = await collect_pages(client, service.url("/v1/contacts?limit=100"), {})

    assert service.kills == KILLS
    interrupted = [o for o in outcomes if o.interrupted]
    assert interrupted, "no request was in flight at any kill: the test proved nothing"
    assert all(o.contact_id is not None for o in outcomes)
    # Each request created its contact exactly once, and its answer names that contact.
    assert sorted(listed) == sorted(o.contact_id for o in outcomes if o.contact_id)
    assert Counter(listed).most_common(1)[0][1] == 1
    assert await _reservations_without_response(url) == 0
    replayed = sum(o.replayed for o in interrupted)
    conflicts = sum(o.statuses.count(409) for o in outcomes)
    print(
        f"\n[{backend_name}] idempotency crash test: {len(outcomes)} requests, {KILLS} SIGKILLs, "
        f"{len(interrupted)} interrupted and retried ({replayed} answered by a replay, "
        f"{len(interrupted) - replayed} ran afresh), {conflicts} passing 409s, 0 stranded keys, "
        "0 duplicate contacts"
    )


async def _reservations_without_response(url: str) -> int:
    db = Database(make_settings(url))
    try:
        async with db.read() as conn:
            count = await conn.scalar(
                select(func.count()).where(idempotency_keys.c.response_status.is_(None))
            )
        return int(count or 0)
    finally:
        await db.dispose()
