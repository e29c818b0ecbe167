"""Rate limits: per key, per address when unauthenticated, one budget across processes via Redis."""

from __future__ import annotations

import asyncio
import math
import os
import re
import time
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from redis.asyncio import Redis

from hookline.guards.ratelimit import LocalWindows, RateLimitState, SharedWindows
from tests.conftest import make_settings
from tests.guards.conftest import RedisServer, running_app, sqlite_url
from tests.support.waiting import eventually

_RATELIMIT = re.compile(r'^"default";r=(\d+);t=(\d+)$')


def remaining(response: httpx.Response) -> int:
    match = _RATELIMIT.match(response.headers["ratelimit"])
    assert match, response.headers["ratelimit"]
    return int(match.group(1))


def assert_rate_limited(response: httpx.Response) -> None:
    assert response.status_code == 429
    body = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == "rate_limited"
    assert body["error"]["request_id"] == response.headers["x-request-id"]
    assert int(response.headers["retry-after"]) >= 1
    assert remaining(response) == 0


async def test_headers_count_down_then_429(tmp_path: Path) -> None:
    # Hour windows in the tests that count exactly: the sliding window lets a request or two more
    # through once its window turns over, which a minute window did mid-test ~1 run in 30.
    settings = make_settings(sqlite_url(tmp_path), rate_limit="5/hour")
    async with running_app(settings) as running:
        account = await running.account()
        seen = []
        for _ in range(5):
            response = await running.client.get("/v1/contacts", headers=account.headers)
            assert response.status_code == 200
            assert response.headers["ratelimit-policy"] == '"default";q=5;w=3600'
            seen.append(remaining(response))
        assert seen == [4, 3, 2, 1, 0]
        refused = await running.client.get("/v1/contacts", headers=account.headers)
        assert_rate_limited(refused)
        assert 1 <= int(refused.headers["retry-after"]) <= 3600
        # Another key has its own budget.
        other = await running.account("other")
        assert (await running.client.get("/v1/contacts", headers=other.headers)).status_code == 200


async def test_every_v1_response_has_the_headers(tmp_path: Path) -> None:
    settings = make_settings(sqlite_url(tmp_path), rate_limit="50/minute")
    async with running_app(settings) as running:
        account = await running.account()
        responses = [
            await running.client.get("/v1/contacts"),  # 401
            await running.client.get("/v1/nowhere", headers=account.headers),  # 404 route
            await running.client.put("/v1/contacts", headers=account.headers),  # 405
            await running.client.post(  # 422
                "/v1/contacts", headers=account.headers, json={"first_name": ""}
            ),
            await running.client.post(  # 413 from the middleware, by Content-Length
                "/v1/contacts",
                headers={**account.headers, "content-type": "application/json"},
                content=b"x" * (65 * 1024),
            ),
        ]
        assert [r.status_code for r in responses] == [401, 404, 405, 422, 413]
        for response in responses:
            assert response.headers["ratelimit-policy"] == '"default";q=50;w=60'
            assert _RATELIMIT.match(response.headers["ratelimit"])
        health = await running.client.get("/healthz")
        assert "ratelimit" not in health.headers  # only the API is limited


async def test_unauthenticated_requests_are_limited_per_address(tmp_path: Path) -> None:
    settings = make_settings(sqlite_url(tmp_path), rate_limit="3/hour")
    async with running_app(settings) as running:
        guesses = [
            await running.client.get(
                "/v1/contacts", headers={"Authorization": f"Bearer hl_live_guess{i}"}
            )
            for i in range(4)
        ]
        assert [r.status_code for r in guesses] == [401, 401, 401, 429]
        assert_rate_limited(guesses[-1])
        # A real key is charged to itself, not to the address that was flooding.
        account = await running.account()
        assert (
            await running.client.get("/v1/contacts", headers=account.headers)
        ).status_code == 200


async def count_allowed(clients: list[httpx.AsyncClient], headers: dict[str, str], n: int) -> int:
    allowed = 0
    for i in range(n):
        response = await clients[i % len(clients)].get("/v1/contacts", headers=headers)
        assert response.status_code in (200, 429)
        allowed += response.status_code == 200
    return allowed


async def test_two_processes_share_one_budget_through_redis(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    url = sqlite_url(tmp_path)
    settings = make_settings(url, rate_limit="10/hour", redis_url=redis_server.url)
    async with running_app(settings) as first, running_app(settings) as second:
        account = await first.account()
        allowed = await count_allowed([first.client, second.client], account.headers, 30)
    assert allowed == 10


async def test_a_stopped_app_leaves_no_connection_to_redis(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    settings = make_settings(
        sqlite_url(tmp_path), rate_limit="10/minute", redis_url=redis_server.url
    )
    observer = Redis.from_url(redis_server.url)

    async def clients() -> int:
        return len(await observer.client_list())  # ours included

    try:
        before = await clients()
        async with running_app(settings) as running:
            account = await running.account()
            assert (await running.client.get("/v1/contacts", headers=account.headers)).is_success
            assert await clients() > before, "the limiter never used Redis"
        await eventually(clients, lambda n: n == before, what="the app's connections closed")
    finally:
        await observer.aclose()


async def test_without_redis_each_process_has_its_own_budget(tmp_path: Path) -> None:
    # The control for the test above: the sharing really comes from Redis.
    settings = make_settings(sqlite_url(tmp_path), rate_limit="10/hour")
    async with running_app(settings) as first, running_app(settings) as second:
        account = await first.account()
        allowed = await count_allowed([first.client, second.client], account.headers, 30)
    assert allowed == 20


async def test_redis_outage_fails_open(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from tests.support.server import free_port

    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings = make_settings(sqlite_url(tmp_path), rate_limit="1/minute", redis_url=dead)
    async with running_app(settings) as running:
        account = await running.account()
        for _ in range(3):
            response = await running.client.get("/v1/contacts", headers=account.headers)
            assert response.status_code == 200
    assert "rate-limit storage unavailable" in caplog.text


# LocalWindows replaces limits' in-memory storage (for speed, see its docstring): it must give the
# answers limits gives, hit for hit, on the same clock.
_HITS = st.lists(
    st.tuples(st.floats(min_value=0, max_value=3, allow_nan=False), st.sampled_from("abc")),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(amount=st.integers(1, 6), seconds=st.sampled_from([1, 2, 60]), hits=_HITS)
# A hit at a window's first instant (the clock starts at .25 s): limits says reset 0 there.
@example(amount=1, seconds=1, hits=[(0.75, "a")])
def test_local_windows_agree_with_limits(
    amount: int, seconds: int, hits: list[tuple[float, str]]
) -> None:
    asyncio.run(_compare_with_limits(amount, seconds, hits))


async def _compare_with_limits(amount: int, seconds: int, hits: list[tuple[float, str]]) -> None:
    clock = [1_800_000_000.25]
    item = RateLimitItemPerSecond(amount, seconds)
    reference = SlidingWindowCounterRateLimiter(MemoryStorage())
    local = LocalWindows(amount, seconds)
    shared = SharedWindows(amount, seconds, slots=64)  # a small table: probing is exercised
    with closing(shared), pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: clock[0])
        for step, identity in hits:
            clock[0] += step * seconds
            allowed = await reference.hit(item, identity)
            reset_at, remaining = await reference.get_window_stats(item, identity)
            expected = RateLimitState(allowed, remaining, max(0, math.ceil(reset_at - clock[0])))
            assert local.hit(identity, clock[0]) == expected
            assert shared.hit(identity, clock[0]) == expected


def test_local_windows_forget_identities_whose_windows_slid_out() -> None:
    local = LocalWindows(5, 1)
    for n in range(100):
        local.hit(f"addr:10.0.0.{n}", 1000.5)
    local.hit("key:live", 1001.5)  # the next window: the 100 addresses still count
    assert len(local._counts) == 101
    local.hit("key:live", 1002.5)  # two windows on, they slid out
    assert set(local._counts) == {"key:live"}


def test_shared_windows_are_one_budget_across_forked_processes() -> None:
    """``hookline serve --workers N`` forks its processes after creating the table: a hit in one
    counts in all (the per-process LocalWindows would give each its own 10)."""
    with closing(SharedWindows(10, 86_400)) as shared:
        now = time.time()
        pid = os.fork()
        if pid == 0:  # the other process: 6 hits, exit status = how many were allowed
            os._exit(sum(shared.hit("key:k", now).allowed for _ in range(6)))
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 6
        assert [shared.hit("key:k", now).allowed for _ in range(6)] == [True] * 4 + [False] * 2
        assert shared.hit("key:other", now).allowed  # another identity has its own budget


def test_shared_windows_reuse_slots_of_windows_that_slid_out() -> None:
    with closing(SharedWindows(1, 1, slots=4)) as shared:
        for n in range(4):
            assert shared.hit(f"addr:{n}", 1000.5).allowed
        # Two windows on, the four slots are stale: new identities take them and start at zero.
        for n in range(4, 8):
            assert shared.hit(f"addr:{n}", 1002.5).allowed
        assert not shared.hit("addr:7", 1002.6).allowed  # and are counted from there
