"""``hookline serve --workers N``: the real CLI, N real processes on one port (supervisor.py).

Which process answered is read from the log: with several processes every line carries its
``pid`` and ``process_name``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookline.supervisor import NOT_STARTED, RESTART_LIMIT, Supervisor
from hookline.timeutil import iso, utcnow
from tests.conftest import TEST_SECRET_KEY, make_database_url
from tests.support.api import collect_pages
from tests.support.rawhttp import raw_connection
from tests.support.receiver import Receiver
from tests.support.server import (
    CLI,
    ServerProcess,
    async_running_server,
    cli_env,
    read_log,
    run_cli,
    running_server,
    terminate,
)
from tests.support.waiting import eventually, wait_until

TWO = ("--workers", "2")


def _lines(logs: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in logs.splitlines() if line.startswith("{")]


def _access_pids(server: ServerProcess, path: str) -> set[int]:
    return {
        line["pid"]
        for line in _lines(server.logs())
        if line["logger"] == "hookline.access" and line.get("path") == path
    }


def _started_pids(server: ServerProcess) -> list[int]:
    return [
        line["pid"]
        for line in _lines(server.logs())
        if line["message"].startswith("Started server process")
    ]


def _requests_counted(metrics: str, status: str) -> float:
    pattern = (
        r'^hookline_http_requests_total\{method="GET",route="/v1/contacts",'
        rf'status="{status}"\}} (\S+)$'
    )
    found = re.search(pattern, metrics, re.M)
    return float(found.group(1)) if found else 0.0


def _env(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, str]:
    return {
        "HOOKLINE_DATABASE_URL": make_database_url(backend, tmp_path, request),
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    }


def _new_key(env: dict[str, str]) -> dict[str, str]:
    created = run_cli("accounts", "create", "workers", env=env)
    assert created.returncode == 0, created.stderr
    return {"Authorization": f"Bearer {json.loads(created.stdout)['api_key']}"}


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
def test_two_processes_answer_on_one_port_and_share_a_keys_rate_limit(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Both processes answer, and a key's 30 requests a day are 30 in all, not 30 each (the
    contract: every limit holds across the processes, without Redis)."""
    env = {**_env(backend_name, tmp_path, request), "HOOKLINE_RATE_LIMIT": "30/day"}
    with running_server(env, worker=False, args=TWO) as server:
        headers = _new_key(env)

        def status_on_a_new_connection(_: int) -> int:
            # A new connection each time: the kernel hands each to one of the processes.
            with httpx.Client(base_url=server.base_url) as client:
                return client.get("/v1/contacts", headers=headers).status_code

        statuses: list[int] = []
        with ThreadPoolExecutor(8) as pool:
            while len(statuses) < 200 and (
                len(statuses) < 60 or len(_access_pids(server, "/v1/contacts")) < 2
            ):
                statuses += pool.map(status_on_a_new_connection, range(20))
        assert statuses.count(200) == 30, statuses
        assert set(statuses) == {200, 429}
        wait_until(lambda: len(_access_pids(server, "/v1/contacts")) == 2, within=5)
        # /metrics adds up both processes, whichever answers the scrape.
        for _ in range(6):
            with httpx.Client(base_url=server.base_url) as client:
                text = client.get("/metrics").text
            assert _requests_counted(text, "200") == 30, text
            assert _requests_counted(text, "429") == len(statuses) - 30


def _tcp_sockets(pid: int, port: int) -> list[tuple[str, str]]:
    """``pid``'s TCP sockets on local ``port``: their state ("LISTEN" or "ESTABLISHED") and
    inode (the socket itself, whichever processes hold it)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    states = {"0A": "LISTEN", "01": "ESTABLISHED"}
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and fields[9] in inodes and fields[3] in states:
                found.append((states[fields[3]], fields[9]))
    return found


def test_each_process_listens_on_its_own_socket_and_new_connections_spread_over_them(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On one shared listener a burst of new connections (a client's pool opening) went 6 / 58
    or 8 / 56 in half the rounds of bench.scale, one process queueing requests while the other
    idled. Each process listens on a socket of its own
    (SO_REUSEPORT) and the kernel hashes each new connection to one: 64 at once land 16-48 on
    each (outside that by chance once in ~20,000 runs)."""
    with running_server(_env("sqlite", tmp_path, request), worker=False, args=TWO) as server:
        wait_until(lambda: len(_started_pids(server)) == 2, within=30)
        children = _started_pids(server)
        listening = [
            {inode for state, inode in _tcp_sockets(pid, server.port) if state == "LISTEN"}
            for pid in children
        ]
        assert [len(each) for each in listening] == [1, 1]
        assert listening[0] != listening[1]  # not the one socket, inherited by both
        with contextlib.ExitStack() as stack:
            burst = [stack.enter_context(raw_connection(server.port)) for _ in range(64)]
            for conn in burst:
                conn.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert {conn.response().status for conn in burst} == {200}  # each one accepted
            answered = [
                [state for state, _ in _tcp_sockets(pid, server.port)].count("ESTABLISHED")
                for pid in children
            ]
        assert sum(answered) == 64
        assert all(16 <= each <= 48 for each in answered), answered


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
async def test_a_commit_in_any_api_process_wakes_a_worker_in_another_at_once(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """API-only processes and a `hookline worker` that polls once a minute: each delivery
    arrives within seconds, so the wake-up crossed processes (a datagram on SQLite, NOTIFY on
    PostgreSQL), from each of the two API processes."""
    env = {**_env(backend_name, tmp_path, request), "HOOKLINE_DELIVERY_POLL_SECONDS": "60"}
    async with (
        Receiver() as receiver,
        async_running_server(env, worker=False, args=TWO) as server,
    ):
        headers = _new_key(env)
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            hook = await client.post(
                "/v1/webhooks",
                json={"url": receiver.url, "events": ["contact.created"]},
                headers=headers,
            )
            assert hook.status_code == 201, hook.text
        with _worker_process(env, tmp_path) as worker_log:
            await eventually(
                lambda: _read(worker_log), lambda text: "delivery worker" in text, within=30
            )
            posted = 0
            while posted < 40 and (posted < 4 or len(_access_pids(server, "/v1/contacts")) < 2):
                # A new client each time: a new connection, to either process.
                async with httpx.AsyncClient(base_url=server.base_url) as client:
                    created = await client.post(
                        "/v1/contacts",
                        json={"first_name": f"n{posted}", "phone_number": "+14155552671"},
                        headers=headers,
                    )
                assert created.status_code == 201, created.text
                posted += 1
                await receiver.wait_for(posted, timeout=10)  # the poll would take 60 s
        assert len(_access_pids(server, "/v1/contacts")) == 2


async def _read(path: Path) -> str:
    return await asyncio.to_thread(read_log, path)


@contextmanager
def _worker_process(env: dict[str, str], tmp_path: Path) -> Iterator[Path]:
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*CLI, "worker"],
            env=cli_env({**env, "HOOKLINE_LOG_LEVEL": "INFO"}),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield log_path
    finally:
        assert terminate(process, timeout=30) == 0, log_path.read_text()


def test_a_killed_process_is_replaced_and_sigterm_stops_them_all_after_in_flight_requests(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = _env("sqlite", tmp_path, request)
    with running_server(env, args=TWO) as server:
        headers = _new_key(env)
        wait_until(lambda: len(_started_pids(server)) == 2, message="both processes")
        victim = min(_started_pids(server))
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(_started_pids(server)) == 3, message="a replacement", within=30)
        assert f"(pid {victim}) exited with status -9" in server.logs()
        children = set(_started_pids(server)) - {victim}
        with raw_connection(server.port) as conn:
            body = b'{"first_name": "in flight", "phone_number": "+14155552671"}'
            head = (
                "POST /v1/contacts HTTP/1.1\r\nHost: hookline.test\r\n"
                f"Authorization: {headers['Authorization']}\r\nExpect: 100-continue\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            conn.send(head.encode())
            # "100 Continue" says a process has parsed the head and its app awaits the body: the
            # request is in flight. (A head still unread when the SIGTERM lands is not, and
            # uvicorn closes such a connection: the race the CI run of 2026-11-24 lost.)
            assert conn.response().status == 100
            server.process.send_signal(signal.SIGTERM)
            wait_until(lambda: "stopping 2 processes" in server.logs())
            conn.send(body)
            answer = conn.response()
        assert answer.status == 201, answer.body
        assert server.process.wait(timeout=40) == 0
        logs = server.logs()
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    stopped = [
        line
        for line in _lines(logs)
        if line["message"].startswith("delivery worker") and "stopped" in line["message"]
    ]
    assert {line["pid"] for line in stopped} == children, logs
    # The processes share the database by design: none tells the reader to stop the other.
    notices = [line for line in _lines(logs) if "another delivery worker" in line["message"]]
    assert notices == [], notices
    assert "all processes stopped" in logs


def test_a_process_that_cannot_start_stops_the_supervisor_at_once() -> None:
    """Not a restart loop: the others are stopped and the status says why."""
    assert Supervisor(2, lambda _slot: NOT_STARTED, stop_timeout=5).run() == NOT_STARTED


def test_processes_that_keep_dying_stop_the_supervisor_with_an_error() -> None:
    supervisor = Supervisor(1, lambda _slot: 1, stop_timeout=5)
    assert supervisor.run() == 1
    assert len(supervisor._deaths) == RESTART_LIMIT + 1  # restarted RESTART_LIMIT times first


OVERDUE_CALLS = 40


@pytest.mark.parametrize("backend_name", ["sqlite", "postgres"])
async def test_two_processes_sweeping_end_each_overdue_call_once(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each of the two processes runs the sweeper every fraction of a second on the same
    database: every overdue call ends as ``timed-out`` with one ``call.completed``, which the
    receiver gets once (by event id and by call id)."""
    env = {
        **_env(backend_name, tmp_path, request),
        "HOOKLINE_CALL_SWEEP_SECONDS": "0.2",
        "HOOKLINE_RATE_LIMIT": "1000000/second",
    }
    async with (
        Receiver() as receiver,
        async_running_server(env, worker=True, args=TWO) as server,
    ):
        headers = _new_key(env)
        async with httpx.AsyncClient(base_url=server.base_url, headers=headers) as client:
            hook = await client.post(
                "/v1/webhooks", json={"url": receiver.url, "events": ["call.completed"]}
            )
            assert hook.status_code == 201, hook.text
            started = iso(utcnow() - timedelta(hours=2))  # past the default max_call_seconds
            body = {
                "call_type": "inbound",
                "customer_phone_number": "+14155552671",
                "call_started_at": started,
            }
            created = await asyncio.gather(
                *(client.post("/v1/calls", json=body) for _ in range(OVERDUE_CALLS))
            )
            assert {c.status_code for c in created} == {201}
            call_ids = {c.json()["id"] for c in created}
            await receiver.wait_until(
                lambda got: {r.json()["data"]["id"] for r in got} >= call_ids,
                timeout=60,
                description="every overdue call's call.completed",
            )
            # Every delivery is done, so no late duplicate can still be on its way.
            deliveries = f"/v1/webhooks/{hook.json()['id']}/deliveries?limit=100"
            await eventually(
                lambda: collect_pages(client, deliveries + "&status=succeeded", {}),
                lambda found: len(found[0]) == OVERDUE_CALLS,
                within=30,
                interval=0.2,
                what="every delivery succeeded",
            )
            events, _ = await collect_pages(client, "/v1/events?type=call.completed&limit=100", {})
            ended = [(await client.get(f"/v1/calls/{i}")).json() for i in sorted(call_ids)]
    assert len(events) == OVERDUE_CALLS
    assert {call["call_status"] for call in ended} == {"timed-out"}
    bodies = [r.json() for r in receiver.requests]
    assert Counter(b["id"] for b in bodies) == Counter({event: 1 for event in events})
    assert Counter(b["data"]["id"] for b in bodies) == Counter({i: 1 for i in call_ids})
    assert {b["data"]["call_status"] for b in bodies} == {"timed-out"}
    assert {b["type"] for b in bodies} == {"call.completed"}
