"""``runtime``: start-up objects leave the collector, young collections thin out; ``serve``'s loop
accepts every waiting connection at once."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, cast

import pytest
import uvicorn

from hookline import cli, logs, runtime
from hookline.cli import server_options

_PROBE = """
import gc, json
import hookline.app  # what `hookline serve` has imported by then
from hookline.runtime import YOUNG_GENERATION_THRESHOLD, settle_heap
before = gc.get_freeze_count()
settle_heap()
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(),
                  "threshold": gc.get_threshold()[0], "expected": YOUNG_GENERATION_THRESHOLD}))
"""


def test_settle_heap_freezes_start_up_objects_and_raises_the_young_threshold() -> None:
    # In a child process: freezing the test runner's own heap would outlive this test.
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    seen = json.loads(out)
    assert seen["before"] == 0
    assert seen["frozen"] > 50_000  # the imported app: modules, classes, schemas
    assert seen["threshold"] == seen["expected"] == 20_000


def test_serve_and_worker_settle_the_heap_just_before_they_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setenv("HOOKLINE_DATABASE_URL", f"sqlite:///{tmp_path / 'runtime.db'}")
    monkeypatch.setenv("HOOKLINE_WORKERS", "1")
    monkeypatch.setattr(logs, "configure_logging", lambda _level, **_options: None)
    monkeypatch.setattr(runtime, "settle_heap", lambda: calls.append("settle"))

    def serve(server: uvicorn.Server, sockets: Any = None) -> None:
        calls.append("serve")
        server.started = True

    monkeypatch.setattr(uvicorn.Server, "run", serve)

    def run(main: Coroutine[Any, Any, None]) -> None:
        main.close()
        calls.append("work")

    monkeypatch.setattr(cli, "_run", run)

    assert cli.main(["serve"]) == 0
    assert cli.main(["worker"]) == 0
    assert calls == ["settle", "serve", "settle", "work"]


class _Echo(asyncio.Protocol):
    def __init__(self, made: list[asyncio.Transport]) -> None:
        self._made = made

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses; they have its methods.
        self._transport = cast(asyncio.Transport, transport)
        self._made.append(self._transport)

    def data_received(self, data: bytes) -> None:
        self._transport.write(data)


async def _accepted_within(turns: int, waiting: int) -> list[int]:
    """How many of ``waiting`` connections the loop accepted in ``turns`` turns, each one's
    TCP_NODELAY; then checks that every connection is served."""
    made: list[asyncio.Transport] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = await asyncio.get_running_loop().create_server(
        lambda: _Echo(made), sock=listener, backlog=128
    )
    # Connected by the kernel, waiting in the listener's queue until the loop accepts them.
    clients = [socket.create_connection(listener.getsockname(), timeout=10) for _ in range(waiting)]
    try:
        for _ in range(turns):
            await asyncio.sleep(0)
        accepted = [
            t.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            for t in made
        ]
        for client in clients:  # and each is served: its bytes come back
            client.sendall(b"ping")
        for client in clients:
            await asyncio.to_thread(client.recv, 4)
        return accepted
    finally:
        for client in clients:
            client.close()
        server.close()


def test_serve_loop_accepts_every_waiting_connection_in_a_few_turns() -> None:
    # uvloop alone accepts one connection per turn: 10 of 40 here, and under load a turn runs
    # every ready request, so the last connections waited a second (docs/benchmarks.md, 33).
    loop = runtime.new_event_loop()
    try:
        accepted = loop.run_until_complete(_accepted_within(turns=10, waiting=40))
    finally:
        loop.close()
    assert len(accepted) == 40
    assert all(accepted)  # TCP_NODELAY, as on uvloop's own accepted connections: no Nagle wait


def test_serve_runs_on_that_loop() -> None:
    config = uvicorn.Config(app=lambda: None, **server_options())
    assert config.get_loop_factory() is runtime.new_event_loop


def test_an_idle_connection_outlives_the_clients_idle_timeouts() -> None:
    """The client, not the server, closes an idle keep-alive connection: a server closing one
    as a client reuses it fails that client's POST with a reset (the CI run of 2026-11-24)."""
    import httpx

    config = uvicorn.Config(app=lambda: None, **server_options())
    go_idle_conn_timeout = 90  # net/http's Transport.IdleConnTimeout, the longest common one
    httpx_idle_expiry = httpx.Limits().keepalive_expiry
    assert httpx_idle_expiry is not None
    assert config.timeout_keep_alive > httpx_idle_expiry
    assert config.timeout_keep_alive > go_idle_conn_timeout
