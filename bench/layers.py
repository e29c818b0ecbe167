"""Where a request's CPU goes, layer by layer: py-spy samples of ``hookline serve`` under wrk.

    python -m bench.layers            # POST /v1/contacts on SQLite and PostgreSQL, 10 s each
    BENCH_SECONDS=5 python -m bench.layers

One server process pinned to the server core, wrk (64 connections) on the load core, py-spy
sampling the server at 250 Hz with the native frames of C extensions (``BENCH_NATIVE=0``: Python
frames only, without pausing the process); idle samples are left out, so the samples are where
the CPU went. Each sample is charged to one layer: the deepest frame of
the stack that belongs to a layer decides (a library called by our code counts for the layer
that called it, except the libraries that are a layer of their own: pydantic is validation,
SQLAlchemy and the drivers are storage, orjson is serialisation unless the log called it). CPU
µs per request comes from ``/proc/<pid>/stat`` over a run just before, without the profiler, so
each layer's share times it is that layer's µs per request. Samples of threads waiting (the
executor's idle threads, a COMMIT waiting for fsync) are not CPU and are dropped. Needs py-spy
(``pip install -e '.[bench]'``) and the right to ptrace the server (root, or
``kernel.yama.ptrace_scope=0``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tests.support.postgres import running_postgres

from bench import wrk
from bench.api import _cpu_seconds
from bench.env import CONTACT_BODY, auth_headers, hookline_env, pin_postgres, sqlite_url
from bench.procs import SERVER_CORE, start_hookline
from bench.seed import seed_account
from hookline.settings import Settings

RATE_HZ = 250
NATIVE = os.environ.get("BENCH_NATIVE", "1") not in ("", "0")
"""Sample C extensions' frames too (pydantic-core, orjson, sqlite3), so they count for their
layer rather than for the Python frame that called them."""

# (layer, path fragments of its frames). The deepest frame that matches decides; for one frame,
# the first layer that matches (so api/front.py is the front door, not the handler).
_OURS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("logging", ("hookline/logs.py", "logging/")),
    ("metrics", ("hookline/metrics.py",)),
    (
        "front door (request id, limits, body, rate limit)",
        (
            "hookline/api/front.py",
            "hookline/api/body.py",
            "hookline/guards/",
            "hookline/limits/",
        ),
    ),
    ("auth (key look-up, scope)", ("hookline/api/deps.py", "hookline/domain/keys.py")),
    (
        "validation (schemas, phone, e-mail)",
        (
            "hookline/schemas/",
            "hookline/domain/validation.py",
            "pydantic/",
            "pydantic_core/",
            "phonenumbers/",
            "email_validator/",
        ),
    ),
    (
        "storage (SQL, commit)",
        (
            "hookline/storage/",
            "sqlalchemy/",
            "sqlite3/",
            "aiosqlite/",
            "asyncpg/",
        ),
    ),
    ("serialisation (JSON)", ("orjson/", "hookline/api/responses.py")),
    (
        "routing and runner (FastAPI, Starlette, DirectRoute)",
        (
            "fastapi/",
            "starlette/",
            "hookline/api/routing.py",
        ),
    ),
    ("handler and domain", ("hookline/api/", "hookline/domain/", "hookline/ids.py")),
    (
        "server (uvicorn, httptools, event loop)",
        (
            "uvicorn/",
            "httptools/",
            "uvloop/",
            "asyncio/",
        ),
    ),
)
OTHER = "other"
WAITING = "waiting"
_WAITS = (
    "pthread_cond_timedwait",
    "pthread_cond_wait",
    "PyThread_acquire_lock_timed",
    "fdatasync",
    "epoll_wait",
    "sem_timedwait",
)


def layer_of(stack: list[str]) -> str:
    """The layer of one sample: the deepest frame (the last) that belongs to a layer."""
    if any(wait in frame for frame in stack[-3:] for wait in _WAITS):
        return WAITING
    for frame in reversed(stack):
        for layer, fragments in _OURS:
            if any(fragment in frame for fragment in fragments):
                return layer
    return OTHER


def charge(raw: str) -> Counter[str]:
    """Samples per layer from py-spy's raw (collapsed) output: ``frame;frame;... count``."""
    samples: Counter[str] = Counter()
    for line in raw.splitlines():
        stack_text, _, count = line.rpartition(" ")
        if not stack_text or not count.isdigit():
            continue
        samples[layer_of(stack_text.split(";"))] += int(count)
    del samples[WAITING]
    return samples


def profile(backend: str, url: str, seconds: float, log_dir: Path) -> tuple[Counter[str], float]:
    """Samples per layer, and CPU µs per request, of POST /v1/contacts on one server."""
    account = seed_account(Settings(database_url=url, secret_key="x"), f"layers-{backend}", 1000)
    # INFO: the JSON access log is on, as in production.
    env = {**hookline_env(url, HOOKLINE_LOG_LEVEL="INFO"), **server_overrides()}
    server = start_hookline(f"layers-{backend}", env, core=SERVER_CORE, log_dir=log_dir)
    request = wrk.Request("POST", "/v1/contacts", auth_headers(account.api_key), CONTACT_BODY)
    try:
        wrk.run(server.base_url, request, connections=64, seconds=1)  # warm up
        # CPU per request from a run without the profiler (pausing to sample costs time too).
        before = _cpu_seconds(server.process.pid)
        plain = wrk.run(server.base_url, request, connections=64, seconds=seconds)
        cpu_us = (_cpu_seconds(server.process.pid) - before) * 1e6 / max(1, plain.requests)
        out = log_dir / f"layers-{backend}.txt"
        spy = subprocess.Popen(
            [
                _py_spy(),
                "record",
                "--pid",
                str(server.process.pid),
                "--rate",
                str(RATE_HZ),
                "--duration",
                str(max(1, round(seconds))),
                # py-spy reads native stacks only while the process is paused.
                *(["--native"] if NATIVE else ["--nonblocking"]),
                "--format",
                "raw",
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wrk.run(server.base_url, request, connections=64, seconds=seconds)
        spy.wait(timeout=seconds + 30)
        samples = charge(out.read_text())
        if os.environ.get("BENCH_LAYERS_DEBUG"):
            _print_unclassified(out.read_text())
    finally:
        server.stop()
    return samples, cpu_us


def server_overrides() -> dict[str, str]:
    """``BENCH_SERVER_ENV=NAME=VALUE,...``: settings for the profiled server only."""
    pairs = (item.partition("=") for item in os.environ.get("BENCH_SERVER_ENV", "").split(","))
    return {name: value for name, _, value in pairs if name}


def _print_unclassified(raw: str) -> None:
    leaves: Counter[str] = Counter()
    for line in raw.splitlines():
        stack_text, _, count = line.rpartition(" ")
        if count.isdigit() and layer_of(stack_text.split(";")) == OTHER:
            leaves[";".join(stack_text.split(";")[-3:])] += int(count)
    for leaf, samples in leaves.most_common(15):
        print(samples, leaf)


def _py_spy() -> str:
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else (shutil.which("py-spy") or "py-spy")


def table(backend: str, samples: Counter[str], cpu_us: float) -> str:
    total = sum(samples.values()) or 1
    lines = [
        f"| layer ({backend}, `POST /v1/contacts`, {cpu_us:.0f} µs CPU/req) | share | µs/req |",
        "|---|---|---|",
    ]
    for layer, count in samples.most_common():
        lines.append(f"| {layer} | {count / total:.0%} | {cpu_us * count / total:.0f} |")
    return "\n".join(lines)


def main() -> int:
    seconds = float(os.environ.get("BENCH_SECONDS", "10"))
    log_dir = Path(tempfile.mkdtemp(prefix="hookline-bench-layers-"))
    try:
        with running_postgres() as pg:
            pin_postgres(pg)
            urls = {
                "sqlite": sqlite_url(log_dir, "layers"),
                "postgres": pg.create_database("layers"),
            }
            for backend, url in urls.items():
                samples, cpu_us = profile(backend, url, seconds, log_dir)
                print(table(backend, samples, cpu_us) + "\n", flush=True)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
