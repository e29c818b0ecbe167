"""Crash test: delivery workers SIGKILLed over and over lose nothing.

600 contacts are created through the real API while `hookline worker` processes are killed with
SIGKILL and replaced at random moments. Three real receivers subscribe to contact.created.
Afterwards every event id must have reached every receiver (lost = 0), every request must verify
with the reference `standardwebhooks` library, and the duplicate count is printed (at-least-once
delivery allows duplicates; a lease only expires for a dead worker, so they come from kills).
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from standardwebhooks import Webhook

from hookline.storage.db import Database
from hookline.storage.models import deliveries
from tests.conftest import BACKENDS, TEST_SECRET_KEY, make_database_url, make_settings
from tests.support.api import collect_pages
from tests.support.receiver import Receiver, RecordedRequest
from tests.support.server import arun_cli, async_running_server, cli_env
from tests.support.waiting import eventually

# The chaos, not the count, is what the test is about: 1,200 gave 26 SIGKILLs in one run on a
# loaded 2-core host (9 before the last contact was created); 600 keeps every kill's kind (claims
# in flight, leases left to expire) for half the time, and the test still asserts >= 3 kills.
EVENTS = 600
RECEIVERS = 3
WORKERS = 2
CRASH_ENV = {
    "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
    "HOOKLINE_RATE_LIMIT": "1000000/second",
    # Short leases and timeouts so a killed worker's claims come back within seconds.
    "HOOKLINE_DELIVERY_CONNECT_TIMEOUT": "1",
    "HOOKLINE_DELIVERY_TOTAL_TIMEOUT": "2",
    "HOOKLINE_DELIVERY_LEASE_SECONDS": "4",
    "HOOKLINE_DELIVERY_POLL_SECONDS": "0.2",
    "HOOKLINE_RETRY_SCHEDULE": "0.2,0.5,1,1,1,1,1",
    "HOOKLINE_LOG_LEVEL": "WARNING",
}


class WorkerPool:
    """`hookline worker` subprocesses, killed with SIGKILL and replaced on demand.

    Only a worker that has started (its log says so) is a victim: a worker killed while still
    importing proves nothing, and on a loaded machine start-up alone can outlast the chaos
    cadence, so killing at random would leave no worker alive long enough to deliver anything.
    """

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        # INFO, so that the "delivery worker ... started" line shows when a worker is running.
        self.env = cli_env({**env, "HOOKLINE_LOG_LEVEL": "INFO"})
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen[bytes]] = []
        self.logs: dict[int, Path] = {}
        self.kills = 0
        self.started = 0

    def start_one(self) -> None:
        self.started += 1
        path = self.log_dir / f"worker-{self.started}.log"
        # The worker writes through its own copy of the descriptor; ours closes at once.
        with path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "hookline", "worker"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes.append(process)
        self.logs[process.pid] = path

    def _running(self, process: subprocess.Popen[bytes]) -> bool:
        return process.poll() is None and b"started" in self.logs[process.pid].read_bytes()

    def kill_one(self) -> bool:
        """SIGKILL a random running worker; False when none has started yet."""
        running = [p for p in self.processes if self._running(p)]
        if not running:
            return False
        victim = random.choice(running)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        self.kills += 1
        self.processes.remove(victim)
        return True

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def crashed_unexpectedly(self) -> list[int | None]:
        return [p.returncode for p in self.processes if p.poll() is not None]


@asynccontextmanager
async def chaos(pool: WorkerPool) -> AsyncIterator[None]:
    """Every 0.3-0.8 s kill a running worker and start a replacement, until the block ends."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(random.uniform(0.3, 0.8))  # the chaos cadence, not a wait
            if pool.kill_one():
                pool.start_one()

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


async def _create_contacts(
    client: httpx.AsyncClient, headers: dict[str, str], count: int = EVENTS
) -> None:
    semaphore = asyncio.Semaphore(16)

    async def create(i: int) -> None:
        async with semaphore:
            response = await client.post(
                "/v1/contacts",
                json={"first_name": f"n{i}", "phone_number": "+14155552671"},
                headers=headers,
            )
            assert response.status_code == 201, response.text

    await asyncio.gather(*(create(i) for i in range(count)))


async def _all_event_ids(client: httpx.AsyncClient, headers: dict[str, str]) -> set[str]:
    ids, _pages = await collect_pages(client, "/v1/events?limit=100&type=contact.created", headers)
    return set(ids)


@pytest.mark.slow
@pytest.mark.parametrize("serve_processes", [1, 2])
@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_sigkilled_workers_lose_no_event(
    backend_name: str, serve_processes: int, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """With ``serve_processes`` 2, the API is ``hookline serve --workers 2`` and each of its
    processes runs a delivery worker too, competing for the same deliveries with the pool that
    is being killed: claims stay exclusive across processes, and cross-process wake-ups reach
    the pool's workers."""
    env = {**CRASH_ENV, "HOOKLINE_DATABASE_URL": make_database_url(backend_name, tmp_path, request)}
    assert (await arun_cli("migrate", env=env)).returncode == 0
    created = await arun_cli("accounts", "create", "crash", env=env)
    assert created.returncode == 0, created.stderr
    account = json.loads(created.stdout)
    headers = {"Authorization": f"Bearer {account['api_key']}"}
    pool = WorkerPool(env, tmp_path)
    async with (
        Receiver() as r1,
        Receiver() as r2,
        Receiver() as r3,
        async_running_server(
            {**env, "HOOKLINE_WORKER_IN_PROCESS": "true" if serve_processes > 1 else "false"},
            args=("--workers", str(serve_processes)),
        ) as server,
        httpx.AsyncClient(base_url=server.base_url, timeout=30) as client,
    ):
        receivers = [r1, r2, r3]
        secrets = []
        for receiver in receivers:
            response = await client.post(
                "/v1/webhooks",
                json={"url": receiver.url, "events": ["contact.created"]},
                headers=headers,
            )
            assert response.status_code == 201, response.text
            secrets.append(response.json()["secret"])
        for _ in range(WORKERS):
            pool.start_one()
        try:
            async with chaos(pool):
                await _create_contacts(client, headers)
                expected = await _all_event_ids(client, headers)
                assert len(expected) == EVENTS

                def complete(receiver: Receiver) -> bool:
                    return expected <= {r.headers["webhook-id"] for r in receiver.requests}

                # Keep killing until half the work has arrived and the workers were killed often
                # enough to prove something, then let the survivors finish.
                await r1.wait_until(
                    lambda requests: len(requests) >= EVENTS // 2, timeout=120, description="half"
                )

                async def kills() -> int:
                    return pool.kills

                await eventually(kills, lambda n: n >= 3, within=60, what="three SIGKILLs")
            for receiver in receivers:
                await receiver.wait_until(
                    lambda _requests, receiver=receiver: complete(receiver),  # type: ignore[misc]
                    timeout=180,
                    description="every event",
                )
        finally:
            pool.stop_all()
        duplicates = 0
        for receiver, secret in zip(receivers, secrets, strict=True):
            counts = Counter(r.headers["webhook-id"] for r in receiver.requests)
            lost = expected - set(counts)
            assert lost == set(), f"lost {len(lost)} events"
            duplicates += sum(n - 1 for n in counts.values())
            verifier = Webhook(secret)
            for recorded in receiver.requests:
                payload = verifier.verify(recorded.body, recorded.headers)
                assert payload["type"] == "contact.created"
    print(
        f"\n[{backend_name}, serve --workers {serve_processes}] crash test: {EVENTS} events x "
        f"{RECEIVERS} endpoints, {pool.kills} SIGKILLs, lost=0, duplicates={duplicates}"
    )
    assert pool.kills >= 3, "the workers were not killed often enough to prove anything"


# A stop in the middle of a flow that both processes of `serve --workers 2` deliver, beside an
# endpoint that fails every other request: a failing endpoint is what made the recorders of two
# processes deadlock (a failure writes the webhook's health, a success heals it).
STOP_EVENTS = 300
STOP_ENV = {
    **CRASH_ENV,
    # Enough retries that an alternating endpoint's delivery never runs out of them.
    "HOOKLINE_RETRY_SCHEDULE": ",".join(["0.2"] * 30),
}


def _flaky() -> list[int]:
    return [200, 500] * (STOP_EVENTS * 40)


def _sent_again_after_2xx(receiver: Receiver) -> dict[str, float]:
    """Per event id sent again after the receiver answered it 2xx: when that answer came."""
    accepted: dict[str, float] = {}
    again: dict[str, float] = {}
    for recorded in receiver.requests:
        event_id = recorded.headers["webhook-id"]
        if event_id in accepted:
            again.setdefault(event_id, accepted[event_id])
        elif recorded.reply.status < 300:
            accepted[event_id] = recorded.received_at
    return again


def _accepted(requests: list[RecordedRequest]) -> set[str]:
    return {r.headers["webhook-id"] for r in requests if r.reply.status < 300}


async def _in_flight(database_url: str) -> set[tuple[str, str]]:
    """(webhook id, event id) of every delivery leased and not recorded: the attempts a
    stopped worker had in flight."""
    db = Database(make_settings(database_url))
    try:
        async with db.read() as conn:
            rows = await conn.execute(
                select(deliveries.c.webhook_id, deliveries.c.event_id).where(
                    deliveries.c.leased_by.is_not(None), deliveries.c.status == "pending"
                )
            )
            return {(row.webhook_id, row.event_id) for row in rows}
    finally:
        await db.dispose()


def _conflicts(logs: str) -> list[str]:
    return [line for line in logs.splitlines() if "deadlock" in line.lower() or "conflict" in line]


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_a_stop_sends_no_accepted_delivery_again(
    backend_name: str, stop: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Contract, "Stopping": after SIGTERM, nothing a receiver answered 2xx to is sent again;
    after SIGKILL, only what was in flight (leased, its outcome not stored). Two processes
    record outcomes side by side without a deadlock."""
    url = make_database_url(backend_name, tmp_path, request)
    env = {**STOP_ENV, "HOOKLINE_DATABASE_URL": url, "HOOKLINE_WORKER_IN_PROCESS": "true"}
    assert (await arun_cli("migrate", env=env)).returncode == 0
    created = await arun_cli("accounts", "create", "stop", env=env)
    assert created.returncode == 0, created.stderr
    headers = {"Authorization": f"Bearer {json.loads(created.stdout)['api_key']}"}
    logs: list[str] = []
    async with Receiver() as steady, Receiver() as flaky, Receiver() as flakier:
        flaky.script(_flaky())
        flakier.script(_flaky()[1:])
        receivers: dict[str, Receiver] = {}
        async with (
            async_running_server(env, args=("--workers", "2"), stop_timeout=30) as server,
            httpx.AsyncClient(base_url=server.base_url, timeout=30) as client,
        ):
            for receiver in (steady, flaky, flakier):
                response = await client.post(
                    "/v1/webhooks",
                    json={"url": receiver.url, "events": ["contact.created"]},
                    headers=headers,
                )
                assert response.status_code == 201, response.text
                receivers[response.json()["id"]] = receiver
            await _create_contacts(client, headers, STOP_EVENTS)
            await steady.wait_for(STOP_EVENTS // 3, timeout=120)
            assert len(_accepted(flaky.requests)) < STOP_EVENTS  # stopped mid-flow
            stopped_at = time.monotonic()
            if stop == "SIGTERM":
                assert await asyncio.to_thread(server.stop, 30) == 0
            else:
                await asyncio.to_thread(server.kill)
            logs.append(server.logs())
        in_flight = await _in_flight(url)
        async with (
            async_running_server(env, args=("--workers", "2"), stop_timeout=30) as server,
            httpx.AsyncClient(base_url=server.base_url, timeout=30) as client,
        ):
            expected = await _all_event_ids(client, headers)
            for receiver in receivers.values():
                await receiver.wait_until(
                    lambda requests: expected <= _accepted(requests), timeout=180
                )
            logs.append(server.logs())
    again = {
        (hook, event_id): stopped_at - accepted_at
        for hook, receiver in receivers.items()
        for event_id, accepted_at in _sent_again_after_2xx(receiver).items()
    }
    assert _conflicts("\n".join(logs)) == []
    if stop == "SIGTERM":
        assert in_flight == set()  # every claim finished or handed back
        assert again == {}
    else:
        assert set(again) <= in_flight
    print(
        f"\n[{backend_name}] {stop} mid-flow: {len(in_flight)} in flight, {len(again)} sent "
        f"again after a 2xx, the oldest answered {max(again.values(), default=0):.3f} s before"
    )
