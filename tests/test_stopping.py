"""A graceful stop of the real ``hookline serve`` (stopping.py, api/protocol.py, supervisor.py).

Clients speak raw HTTP/1.1 on kept-alive connections, as a connection pool does: before reusing
a connection a client looks whether the server closed it, and a request it managed to write must
then get an answer. A write that succeeded followed by a close without an answer is the failure
these tests look for.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from hookline.stopping import DRAIN_SECONDS
from tests.conftest import TEST_SECRET_KEY
from tests.support.rawhttp import (
    ConnectionClosed,
    RawConnection,
    RawResponse,
    json_request,
)
from tests.support.server import (
    CLI,
    ServerProcess,
    cli_env,
    free_port,
    run_cli,
    running_server,
)
from tests.support.waiting import wait_until

CLIENTS = 16
ANSWERS_BEFORE_THE_SIGNAL = 3
"""Each client's answers before the signal: every connection is open and busy when it lands."""
WAIT = 60.0


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'stop.db'}",
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        # The clients write as fast as they are answered: no key's budget in the way.
        "HOOKLINE_RATE_LIMIT": "1000000/second",
        **extra,
    }


def _auth(env: dict[str, str]) -> dict[str, str]:
    created = run_cli("accounts", "create", "stopping", env=env)
    assert created.returncode == 0, created.stderr
    return {"Authorization": f"Bearer {json.loads(created.stdout)['api_key']}"}


def _contact(name: str, auth: dict[str, str]) -> bytes:
    body = orjson.dumps({"first_name": name, "phone_number": "+14155552671"})
    return json_request("POST", "/v1/contacts", body, auth)


@contextmanager
def _connection(port: int) -> Iterator[RawConnection]:
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        yield RawConnection(sock)


class Client(threading.Thread):
    """Creates contacts on one kept-alive connection until the server closes it."""

    def __init__(self, port: int, auth: dict[str, str], tag: str) -> None:
        super().__init__(daemon=True)
        self.conn = RawConnection(socket.create_connection(("127.0.0.1", port), timeout=WAIT))
        self.auth = auth
        self.tag = tag
        self.answers: list[tuple[str, RawResponse]] = []
        self.failure: str | None = None

    def run(self) -> None:
        try:
            self._create_until_closed()
        except Exception as exc:  # reported by the test, not lost in the thread
            self.failure = f"{self.tag}: {exc!r}"
        finally:
            self.conn.sock.close()

    def _create_until_closed(self) -> None:
        for number in range(1_000_000):
            if self.conn.closed_already():
                return  # closed before this client wrote: nothing was sent
            name = f"{self.tag}-{number}"
            try:
                self.conn.send(_contact(name, self.auth))
            except OSError:
                return  # refused before it was written
            try:
                answer = self.conn.response()
            except (ConnectionClosed, TimeoutError) as exc:
                self.failure = f"{name} was written, then no answer: {exc}"
                return
            self.answers.append((name, answer))
            if answer.headers.get("connection") == "close":
                if not self.conn.closed_by_server():
                    self.failure = f"{name}: answered with Connection: close, left open"
                return


def _signal(server: ServerProcess, sig: signal.Signals, *, group: bool) -> None:
    """To the process, or as Ctrl-C does to the terminal's whole group (every process)."""
    if group:
        os.killpg(server.process.pid, sig)
    else:
        server.process.send_signal(sig)


def _contacts_in_database(env: dict[str, str]) -> dict[str, str]:
    path = env["HOOKLINE_DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT first_name, id FROM contacts"))


STOPS = {
    "sigterm": ([signal.SIGTERM], False),
    "sigterm-twice": ([signal.SIGTERM, signal.SIGTERM], False),
    "ctrl-c": ([signal.SIGINT], True),
    # uvicorn's own server takes a second SIGINT as "force exit", cutting requests short.
    "ctrl-c-twice": ([signal.SIGINT, signal.SIGINT], True),
}


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("stop", list(STOPS))
def test_a_stop_under_load_answers_every_request_written_and_exits_0(
    tmp_path: Path, workers: str, stop: str
) -> None:
    signals, group = STOPS[stop]
    env = _env(tmp_path)
    with running_server(env, args=("--workers", workers)) as server:
        auth = _auth(env)
        clients = [Client(server.port, auth, f"c{index}") for index in range(CLIENTS)]
        for client in clients:
            client.start()
        wait_until(
            lambda: all(len(c.answers) >= ANSWERS_BEFORE_THE_SIGNAL for c in clients),
            within=WAIT,
            message="every client busy",
        )
        for sig in signals:
            _signal(server, sig, group=group)
        for client in clients:
            client.join(WAIT)
        exit_status = server.process.wait(timeout=WAIT)
    assert [c.failure for c in clients if c.failure] == []
    for client in clients:
        assert client.answers[-1][1].headers.get("connection") == "close", client.tag
    created = {name: answer for c in clients for name, answer in c.answers}
    assert {answer.status for answer in created.values()} == {201}
    # Every 201 was applied, and nothing else.
    ids = {name: answer.json()["id"] for name, answer in created.items()}
    assert _contacts_in_database(env) == ids
    assert exit_status == 0


def test_idle_connections_are_closed_promptly_not_after_the_grace(tmp_path: Path) -> None:
    grace = 30.0
    env = _env(tmp_path, HOOKLINE_STOP_GRACE_SECONDS=str(grace))
    with running_server(env) as server:
        auth = _auth(env)
        with _connection(server.port) as used, _connection(server.port) as unused:
            used.send(_contact("kept alive", auth))
            assert used.response().status == 201
            signalled = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            assert used.closed_by_server() and unused.closed_by_server()
            closed_after = time.monotonic() - signalled
            assert server.process.wait(timeout=WAIT) == 0
            exited_after = time.monotonic() - signalled
    assert closed_after >= DRAIN_SECONDS * 0.9  # a request on its way still had its window
    assert closed_after < grace / 3 and exited_after < grace / 3


HALF_SENT = {"head": 0.5, "body": 0.97}
"""Where a request is cut when the signal lands: in its head, or in its body."""


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("cut", list(HALF_SENT))
def test_a_request_half_sent_at_the_signal_is_answered_when_it_completes(
    tmp_path: Path, workers: str, cut: str
) -> None:
    env = _env(tmp_path)
    with running_server(env, args=("--workers", workers)) as server:
        request = _contact("half sent", _auth(env))
        split = int(len(request) * HALF_SENT[cut])
        with _connection(server.port) as conn:
            conn.send(request[:split])
            _wait_for_served_bytes(server)
            server.process.send_signal(signal.SIGTERM)
            wait_until(lambda: "Shutting down" in server.logs(), within=WAIT)
            # Longer than an idle connection is kept: this one has a request under way.
            conn.sock.settimeout(DRAIN_SECONDS * 2)
            assert not conn.closed_by_server()
            conn.send(request[split:])
            conn.sock.settimeout(WAIT)
            answer = conn.response()
            assert answer.status == 201, answer.body
            assert answer.headers["connection"] == "close"
            assert conn.closed_by_server()
        assert server.process.wait(timeout=WAIT) == 0
    assert set(_contacts_in_database(env)) == {"half sent"}


def _wait_for_served_bytes(server: ServerProcess) -> None:
    """Nothing in the protocol reports a partial request; a full one on another connection,
    sent after it, shows the server's loop has taken both connections."""
    with _connection(server.port) as other:
        other.request("GET", "/healthz")
        assert other.response().status == 200


def test_a_grace_that_runs_out_cancels_what_is_left_and_still_exits_0(tmp_path: Path) -> None:
    env = _env(tmp_path, HOOKLINE_STOP_GRACE_SECONDS="1")
    with running_server(env) as server:
        request = _contact("never finished", _auth(env))
        with _connection(server.port) as conn:
            conn.send(request[:-5])  # the head and most of the body: its handler waits
            _wait_for_served_bytes(server)
            signalled = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            assert server.process.wait(timeout=WAIT) == 0
            exited_after = time.monotonic() - signalled
            answer = conn.response()
            assert conn.closed_by_server()
    # Refused before anything was done, in the contract's words, rather than cut off.
    assert answer.status == 503, answer.body
    assert answer.json()["error"]["code"] == "service_unavailable"
    assert answer.headers["connection"] == "close" and "retry-after" in answer.headers
    assert exited_after < WAIT / 2
    assert _contacts_in_database(env) == {}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_signal_during_start_up_stops_the_server_with_exit_0(
    tmp_path: Path, workers: str
) -> None:
    env = cli_env({**_env(tmp_path), "HOOKLINE_WORKERS": workers})
    log_path = tmp_path / "serve.log"
    port = free_port()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*CLI, "serve", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # The first line serve writes: the port is bound, nothing is served yet.
        wait_until(lambda: "hookline: database" in log_path.read_text(), within=WAIT)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=WAIT) == 0, log_path.read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
