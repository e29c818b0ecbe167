"""Bulk upserts of 1,000 rows in one account keep another account's p99 within 25%: the real
server (``hookline serve``) on SQLite and PostgreSQL, the bulk requests sent by curl processes so
the sampling client's loop measures only its own requests, the baseline in the same test."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import orjson
import pytest

from tests.conftest import TEST_SECRET_KEY, make_database_url
from tests.support.server import arun_cli, async_running_server

SAMPLES = 60
ROUNDS = 4


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[int(len(ordered) * 0.99) - 1]


async def sample(client: httpx.AsyncClient, n: int) -> list[float]:
    """``n`` timings of a POST /v1/contacts and a GET of it, one after the other."""
    taken = []
    for i in range(n):
        started = time.perf_counter()
        body = {"first_name": "B", "phone_number": f"+1646555{i % 10_000:04d}"}
        created = await client.post("/v1/contacts", json=body)
        taken.append(time.perf_counter() - started)
        started = time.perf_counter()
        got = await client.get(f"/v1/contacts/{created.json()['id']}")
        taken.append(time.perf_counter() - started)
        assert got.status_code == 200
    return taken


async def send_bulk(url: str, key: str, body: Path, stop: asyncio.Event) -> int:
    sent = 0
    while not stop.is_set():
        process = await asyncio.create_subprocess_exec(
            "curl", "-sf", "-o", "/dev/null", "-X", "POST", url,
            "-H", f"Authorization: Bearer {key}", "-H", "Content-Type: application/json",
            "--data-binary", f"@{body}",
        )  # fmt: skip
        assert await process.wait() == 0
        sent += 1
    return sent


@pytest.mark.latency
async def test_bulk_keeps_other_accounts_p99_within_a_quarter(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = {
        "HOOKLINE_DATABASE_URL": make_database_url(backend, tmp_path, request),
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        "HOOKLINE_RATE_LIMIT": "100000/second",
    }
    assert (await arun_cli("migrate", env=env)).returncode == 0
    keys = []
    for name in ("bulk", "other"):
        created = await arun_cli("accounts", "create", name, env=env)
        keys.append(orjson.loads(created.stdout)["api_key"])
    bodies = []
    for batch in range(1):
        rows = [
            {"first_name": "A", "phone_number": f"+1{212 + batch}555{n:04d}", "tags": ["bulk"]}
            for n in range(1000)
        ]
        path = tmp_path / f"bulk{batch}.json"
        path.write_bytes(orjson.dumps({"match_on": "phone_number", "contacts": rows}))
        bodies.append(path)
    async with async_running_server(env, worker=False) as server:
        headers = {"Authorization": f"Bearer {keys[1]}"}
        async with httpx.AsyncClient(base_url=server.base_url, headers=headers) as client:
            await sample(client, 20)  # warm
            baseline: list[float] = []
            loaded: list[float] = []
            bulks = 0
            for _ in range(ROUNDS):
                baseline += await sample(client, SAMPLES)
                stop = asyncio.Event()
                url = server.base_url + "/v1/contacts/bulk"
                senders = [asyncio.create_task(send_bulk(url, keys[0], b, stop)) for b in bodies]
                loaded += await sample(client, SAMPLES)
                stop.set()
                bulks += sum(await asyncio.gather(*senders))
    assert bulks >= 2
    print(f"{backend}: p99 {p99(baseline) * 1e3:.2f} ms alone, {p99(loaded) * 1e3:.2f} ms "
          f"beside {bulks} bulk requests")  # fmt: skip
    assert p99(loaded) <= 1.25 * p99(baseline)
