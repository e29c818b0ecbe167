"""CEL filters under their limits (``delivery.filters``): the judge's own process cuts an
evaluation at its deadline without the event loop noticing, a cut counts as no match and as
one of the webhook's ``filter_errors``, and the worst filter the budget accepts, with its
account's events flowing, leaves another account's latency where it was. Against the real
``hookline serve`` (SQLite, worker in process)."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from hookline.delivery.filters import FilterJudge, Outcome
from tests.conftest import TEST_SECRET_KEY
from tests.support.filters import nested
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess, arun_cli, async_running_server
from tests.support.waiting import eventually


async def longest_stall(work: asyncio.Future[Any]) -> float:
    """The longest the loop went without turning while ``work`` ran."""
    longest, last = 0.0, time.perf_counter()
    while not work.done():
        await asyncio.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    return longest


async def test_the_judge_cuts_an_overrun_off_the_loop_and_goes_on() -> None:
    judge = FilterJudge(timeout=0.3, memory_bytes=512 << 20)
    try:
        assert await judge.evaluate("acc", "event.n == 1", {"n": 1}) is Outcome.MATCH
        # Eight nested ranges: 10^8 iterations, minutes in the interpreter.
        started = time.perf_counter()
        overrun = asyncio.ensure_future(judge.evaluate("acc", nested(8), {}))
        assert await longest_stall(overrun) < 0.2
        assert overrun.result() is Outcome.CUT
        assert time.perf_counter() - started < 5
        assert await judge.evaluate("acc", "event.n == 1", {"n": 2}) is Outcome.MISS
        assert await judge.evaluate("acc", "event.n == 1", {"n": 1}) is Outcome.MATCH
    finally:
        judge.close()


async def test_the_judge_takes_accounts_in_turn() -> None:
    judge = FilterJudge(timeout=0.3, memory_bytes=512 << 20)
    try:
        await judge.evaluate("a", "true", {})  # the process started
        slow = [asyncio.ensure_future(judge.evaluate("a", nested(8), {})) for _ in range(4)]
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        assert await judge.evaluate("b", "event.n == 1", {"n": 1}) is Outcome.MATCH
        # Behind at most the one overrun in progress and one more of account a's, not four.
        assert time.perf_counter() - started < 4 * 0.3
        assert [outcome for outcome in await asyncio.gather(*slow)] == [Outcome.CUT] * 4
    finally:
        judge.close()


async def test_an_evaluation_out_of_memory_is_cut_and_the_next_one_answers_at_once() -> None:
    judge = FilterJudge(timeout=30, memory_bytes=256 << 20)
    try:
        assert await judge.evaluate("a", "true", {}) is Outcome.MATCH  # the process started
        # A thousand copies of a doubled megabyte: far more than the memory bound.
        hungry = nested(3, "event.s + event.s", "map") + ".size() > 0"
        assert await judge.evaluate("a", hungry, {"s": "x" * (1 << 20)}) is Outcome.CUT
        started = time.perf_counter()
        assert await judge.evaluate("b", "event.n == 1", {"n": 1}) is Outcome.MATCH
        # The evaluator forked after the kill is taken at once, not waited for.
        assert time.perf_counter() - started < 10
    finally:
        judge.close()


# -- the real server ---------------------------------------------------------------------------


@dataclass
class Served:
    server: ServerProcess
    keys: dict[str, str]

    def client(self, account: str) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {self.keys[account]}"}
        return httpx.AsyncClient(base_url=self.server.base_url, headers=headers, timeout=60)


@asynccontextmanager
async def serving(tmp_path: Path, **env: str) -> AsyncIterator[Served]:
    """``hookline serve`` (one process, its worker in it) on SQLite with accounts a and b."""
    full = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'hookline.db'}",
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
        "HOOKLINE_RATE_LIMIT": "100000/second",
        **env,
    }
    assert (await arun_cli("migrate", env=full)).returncode == 0
    keys = {}
    for name in ("a", "b"):
        created = await arun_cli("accounts", "create", name, env=full)
        assert created.returncode == 0, created.stderr
        keys[name] = orjson.loads(created.stdout)["api_key"]
    async with async_running_server(full, args=("--workers", "1")) as server:
        yield Served(server, keys)


async def subscribe(client: httpx.AsyncClient, url: str, filter: str | None) -> Any:
    body = {"url": url, "events": ["contact.created"], "filter": filter}
    response = await client.post("/v1/webhooks", json=body)
    assert response.status_code == 201, response.text
    return response.json()


async def new_contact(client: httpx.AsyncClient) -> httpx.Response:
    body = {"first_name": "Ada", "phone_number": "+14155552671"}
    response = await client.post("/v1/contacts", json=body)
    assert response.status_code == 201, response.text
    return response


async def test_an_evaluation_over_the_limit_is_no_match_and_a_filter_error(
    tmp_path: Path,
) -> None:
    # A budget that lets the eight nested ranges in: the run-time limit must cut them.
    limits = {"HOOKLINE_FILTER_COST_LIMIT": str(10**12), "HOOKLINE_FILTER_TIMEOUT": "0.3"}
    async with serving(tmp_path, **limits) as running:
        async with running.client("a") as a, Receiver() as receiver:
            cut = await subscribe(a, receiver.url_for("/cut"), nested(8))
            await subscribe(a, receiver.url_for("/all"), None)
            passing = await subscribe(a, receiver.url_for("/passing"), "size(event.data) > 0")
            started = time.perf_counter()
            await new_contact(a)
            await new_contact(a)
            await receiver.wait_until(
                lambda rs: sorted(r.path for r in rs) == ["/all", "/all", "/passing", "/passing"],
                timeout=30,
            )

            async def errors_of(hook: Any) -> int:
                stats = await a.get(f"/v1/webhooks/{hook['id']}/stats")
                assert stats.status_code == 200, stats.text
                return int(stats.json()["filter_errors"])

            await eventually(lambda: errors_of(cut), lambda n: n == 2, within=30, what="2 cut")
            assert await errors_of(passing) == 0
            assert time.perf_counter() - started < 20
            listed = await a.get(f"/v1/webhooks/{cut['id']}/deliveries")
            assert listed.json() == []
            assert "/cut" not in {r.path for r in receiver.requests}


def worst_accepted_filter() -> str:
    """The costliest of these that the default budget accepts (asserted by the creation)."""
    return nested(5, "v0 + v1 < 100")


async def latencies(client: httpx.AsyncClient, count: int) -> tuple[list[float], list[float]]:
    posts, probes = [], []
    for _ in range(count):
        started = time.perf_counter()
        await new_contact(client)
        posts.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert (await client.get("/healthz")).status_code == 200
        probes.append(time.perf_counter() - started)
    return posts, probes


def p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98]


@pytest.mark.latency
async def test_the_worst_accepted_filter_does_not_slow_another_account(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as running:
        async with running.client("a") as a, running.client("b") as b, Receiver() as receiver:
            hook = await subscribe(a, receiver.url_for("/a"), None)
            flowing = True

            async def account_a_events() -> None:
                while flowing:
                    await new_contact(a)
                    await asyncio.sleep(0.02)

            feeder = asyncio.ensure_future(account_a_events())
            await latencies(b, 30)  # warm
            without: tuple[list[float], list[float]] = ([], [])
            with_filter: tuple[list[float], list[float]] = ([], [])
            try:
                # Phases alternate, so that the machine's other load falls on both alike.
                for _ in range(3):
                    changed = await a.patch(f"/v1/webhooks/{hook['id']}", json={"filter": None})
                    assert changed.status_code == 200, changed.text
                    for kept, new in zip(without, await latencies(b, 100), strict=True):
                        kept.extend(new)
                    changed = await a.patch(
                        f"/v1/webhooks/{hook['id']}", json={"filter": worst_accepted_filter()}
                    )
                    assert changed.status_code == 200, changed.text
                    for kept, new in zip(with_filter, await latencies(b, 100), strict=True):
                        kept.extend(new)
            finally:
                flowing = False
                await feeder
            stats = await a.get(f"/v1/webhooks/{hook['id']}/stats")
            assert stats.status_code == 200
        for name, before, after in zip(("POST", "healthz"), without, with_filter, strict=True):
            assert statistics.median(after) <= 1.25 * statistics.median(before), name
            assert p99(after) <= 1.25 * p99(before), (name, p99(before), p99(after))
