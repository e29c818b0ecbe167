"""Processes under test, each pinned to a core with ``taskset`` when the machine allows it.

Layout on a 2-core machine: the process being measured (``hookline serve``, a baseline app, a
``hookline worker``, the bare client loop) runs on ``SERVER_CORE``; the load generator (wrk or
bench.loadgen), the webhook receiver and PostgreSQL run on ``LOAD_CORE``, as a database and
clients on other hosts would. With one core nothing is pinned (and the figures say so).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.server import cli_env, free_port, read_log, terminate

_CORES = sorted(os.sched_getaffinity(0))
PINNING = len(_CORES) >= 2 and shutil.which("taskset") is not None
SERVER_CORE = _CORES[0]
LOAD_CORE = _CORES[-1]
START_TIMEOUT = 60.0


def pinned(command: Sequence[str], core: int | None) -> list[str]:
    """``command`` prefixed with ``taskset -c core`` (unchanged when pinning is unavailable)."""
    if core is None or not PINNING:
        return list(command)
    return ["taskset", "-c", str(core), *command]


def pin_process_tree(root_pid: int, core: int) -> None:
    """Pin ``root_pid`` and its current children (e.g. the postmaster and its helpers); later
    children inherit the affinity when they fork."""
    if not PINNING:
        return
    for pid in [root_pid, *children_of(root_pid)]:
        subprocess.run(
            ["taskset", "-a", "-p", "-c", str(core), str(pid)], capture_output=True, check=False
        )


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces; the parent pid is the 2nd field after ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@dataclass
class Proc:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    port: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def logs(self) -> str:
        return read_log(self.log_path)

    def stop(self, timeout: float = 15.0) -> int:
        return terminate(self.process, timeout)


def spawn(
    name: str,
    command: Sequence[str],
    *,
    core: int | None,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
    port: int | None = None,
) -> Proc:
    log_path = log_dir / f"{name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            pinned(command, core),
            env=cli_env(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return Proc(name=name, process=process, log_path=log_path, port=port)


def wait_http(proc: Proc, path: str, timeout: float = START_TIMEOUT) -> None:
    """Until ``GET path`` answers 200; raises with the process's output if it dies first."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.process.poll() is not None:
            raise RuntimeError(f"{proc.name} exited early:\n{proc.logs()}")
        try:
            with urllib.request.urlopen(proc.base_url + path, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            proc.stop()
            raise RuntimeError(f"{proc.name} not ready after {timeout}s:\n{proc.logs()}")
        time.sleep(0.05)


@contextmanager
def running(procs: list[Proc]) -> Iterator[list[Proc]]:
    """Stop every process in ``procs`` (in reverse) when the block exits."""
    try:
        yield procs
    finally:
        for proc in reversed(procs):
            proc.stop()


def start_hookline(name: str, env: Mapping[str, str], *, core: int | None, log_dir: Path) -> Proc:
    port = free_port()
    command = [sys.executable, "-m", "hookline", "serve", "--host", "127.0.0.1"]
    proc = spawn(
        name, [*command, "--port", str(port)], core=core, log_dir=log_dir, env=env, port=port
    )
    wait_http(proc, "/readyz")
    return proc


def start_worker(name: str, env: Mapping[str, str], *, core: int | None, log_dir: Path) -> Proc:
    return spawn(
        name, [sys.executable, "-m", "hookline", "worker"], core=core, log_dir=log_dir, env=env
    )


def start_module(
    name: str, module: str, *args: str, core: int | None, log_dir: Path, ready: str = "/ready"
) -> Proc:
    """``python -m module --port N *args`` (the baseline apps, the receiver)."""
    port = free_port()
    command = [sys.executable, "-m", module, "--port", str(port), *args]
    proc = spawn(name, command, core=core, log_dir=log_dir, port=port)
    wait_http(proc, ready)
    return proc
