"""The real ``hookline`` CLI as a subprocess.

    with running_server({"HOOKLINE_DATABASE_URL": url}) as server:
        httpx.get(server.base_url + "/healthz")

``running_server`` blocks while it starts and stops the process. In async tests whose event loop
also serves something the process talks to (a :class:`~tests.support.receiver.Receiver`), use
``async_running_server`` instead so the loop keeps running meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
CLI = [sys.executable, "-m", "hookline"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cli_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` merged over os.environ, with unbuffered Python output for readable logs."""
    merged = dict(os.environ)
    merged["PYTHONUNBUFFERED"] = "1"
    merged.update(env or {})
    return merged


def run_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m hookline *args`` to completion; stdout/stderr captured as text.

    Does not raise on a non-zero exit: callers assert on ``returncode``.
    """
    return subprocess.run(
        [*CLI, *args],
        env=cli_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
        check=False,
    )


async def arun_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,  # noqa: ASYNC109 - passed on to subprocess.run in the thread
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` in a thread, so the calling event loop keeps serving."""
    return await asyncio.to_thread(run_cli, *args, env=env, timeout=timeout)


def terminate(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> int:
    """SIGTERM, then SIGKILL after ``timeout``; returns the exit code. Idempotent."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def read_log(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


@dataclass
class ServerProcess:
    """A running ``hookline serve``; its stdout and stderr go to ``log_path``."""

    base_url: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def logs(self) -> str:
        """Everything the process wrote so far (stdout and stderr, interleaved)."""
        return read_log(self.log_path)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit code. Idempotent."""
        terminate(self.process, timeout)
        self._kill_group()
        return self.process.returncode

    def kill(self) -> int:
        """SIGKILL at once (a crash, not a shutdown); returns the exit code."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._kill_group()
        return self.process.returncode

    def _kill_group(self) -> None:
        # The process leads its own session; make sure nothing it forked outlives it.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _ready_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError):
        return None


def _start(
    env: Mapping[str, str],
    *,
    worker: bool,
    args: tuple[str, ...],
    log_dir: Path,
    address_from_env: bool = False,
) -> ServerProcess:
    port = free_port()
    merged = cli_env(env)
    if "HOOKLINE_WORKER_IN_PROCESS" not in env:
        merged["HOOKLINE_WORKER_IN_PROCESS"] = "true" if worker else "false"
    # One process unless a test asks for more (HOOKLINE_WORKERS or --workers): the default,
    # auto, would follow the cores of whatever machine runs the suite.
    if "HOOKLINE_WORKERS" not in env:
        merged["HOOKLINE_WORKERS"] = "1"
    address = ["--host", "127.0.0.1", "--port", str(port)]
    if address_from_env:
        merged.update(HOOKLINE_HOST="127.0.0.1", HOOKLINE_PORT=str(port))
        address = []
    log_path = log_dir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*CLI, "serve", *address, *args],
            env=merged,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return ServerProcess(
        base_url=f"http://127.0.0.1:{port}", port=port, process=process, log_path=log_path
    )


def _wait_ready(server: ServerProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    ready_url = server.base_url + "/readyz"
    last: int | None = None
    while True:
        code = server.process.poll()
        if code is not None:
            raise RuntimeError(
                f"hookline serve exited with {code} before it was ready; output:\n{server.logs()}"
            )
        last = _ready_status(ready_url)
        if last == 200:
            return
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(
                f"hookline serve not ready after {timeout}s (last /readyz status: {last}); "
                f"output:\n{server.logs()}"
            )
        time.sleep(0.05)


LOG_TAIL_SHOWN = 20_000
"""Characters of a server's log printed when a test fails inside its block."""


@contextmanager
def _logs_shown_on_failure(server: ServerProcess) -> Iterator[None]:
    """On an exception in the block, print the tail of the server's log: pytest shows captured
    output with the failure, so a CI run says what the server saw (a restart, a traceback)."""
    try:
        yield
    except BaseException:
        print(f"--- hookline serve's log (last {LOG_TAIL_SHOWN} characters) ---")
        print(server.logs()[-LOG_TAIL_SHOWN:])
        raise


@contextmanager
def running_server(
    env: Mapping[str, str],
    *,
    worker: bool = True,
    args: tuple[str, ...] = (),
    start_timeout: float = START_TIMEOUT,
    stop_timeout: float = STOP_TIMEOUT,
    address_from_env: bool = False,
) -> Iterator[ServerProcess]:
    """Run ``hookline serve`` on a free port until the block exits.

    ``env`` (``HOOKLINE_*``) is merged over os.environ. ``worker`` sets
    ``HOOKLINE_WORKER_IN_PROCESS`` unless ``env`` sets it. The address is given as
    ``--host/--port``, or with ``address_from_env`` as HOOKLINE_HOST/HOOKLINE_PORT. Yields once
    ``GET /readyz`` answers 200; raises with the captured output if the process exits or is not
    ready in time.
    """
    log_dir = Path(tempfile.mkdtemp(prefix="hookline-serve-"))
    server: ServerProcess | None = None
    try:
        server = _start(
            env, worker=worker, args=args, log_dir=log_dir, address_from_env=address_from_env
        )
        _wait_ready(server, start_timeout)
        with _logs_shown_on_failure(server):
            yield server
    finally:
        try:
            if server is not None:
                server.stop(stop_timeout)
        finally:
            shutil.rmtree(log_dir, ignore_errors=True)


@asynccontextmanager
async def async_running_server(
    env: Mapping[str, str],
    *,
    worker: bool = True,
    args: tuple[str, ...] = (),
    start_timeout: float = START_TIMEOUT,
    stop_timeout: float = STOP_TIMEOUT,
) -> AsyncIterator[ServerProcess]:
    """:func:`running_server` for async tests: start and stop run in a thread."""
    log_dir = Path(tempfile.mkdtemp(prefix="hookline-serve-"))
    server: ServerProcess | None = None
    try:
        server = _start(env, worker=worker, args=args, log_dir=log_dir)
        await asyncio.to_thread(_wait_ready, server, start_timeout)
        with _logs_shown_on_failure(server):
            yield server
    finally:
        try:
            if server is not None:
                await asyncio.to_thread(server.stop, stop_timeout)
        finally:
            shutil.rmtree(log_dir, ignore_errors=True)
