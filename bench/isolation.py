"""``python -m bench.isolation``: commit-to-receipt of a healthy endpoint alone and beside a
hanging and an always-failing one, as an interleaved A/B of source trees (not part of ``make
bench``, whose delivery phase measures the same thing for this tree alone).

Environment: ``BENCH_TREES`` (``name=path/to/src`` pairs, comma-separated; default this
checkout as ``this``), ``BENCH_BACKENDS`` (``sqlite,postgres``), ``BENCH_RATES`` (POST/s per
backend, e.g. ``sqlite=268,postgres=239``), ``BENCH_SECONDS`` (window, default 5),
``BENCH_ROUNDS`` (default 3), ``BENCH_NOISE`` (the bad endpoints of a noisy window, default
``hang,fail``). Every (tree, plain/noisy) pair runs once per round on a fresh
server and database, rounds interleaved; it prints each window's p50/p99, the server process's
CPU per POST (and PostgreSQL's, the whole cluster's), and the attempts made to the failing
endpoint, then the medians per tree.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from tests.support.postgres import PostgresServer, running_postgres

from bench import delivery
from bench.env import hookline_env, pin_postgres
from bench.procs import LOAD_CORE, SERVER_CORE, Proc, children_of, start_hookline, start_module
from bench.seed import Account

ROOT = Path(__file__).resolve().parent.parent
STOP_SECONDS = 3.0


@dataclass(frozen=True)
class Window:
    tree: str
    noisy: bool
    p50: float
    p99: float
    cpu_us_per_post: float
    db_cpu_us_per_post: float
    failing_attempts: int
    received: int


def _trees() -> dict[str, str]:
    spec = os.environ.get("BENCH_TREES", f"this={ROOT / 'src'}")
    return dict(pair.split("=", 1) for pair in spec.split(","))


def _noise() -> list[str]:
    """The bad endpoints beside the healthy one in a noisy window (``BENCH_NOISE``, default
    ``hang,fail``): one alone tells which of them costs the healthy endpoint its latency."""
    return os.environ.get("BENCH_NOISE", "hang,fail").split(",")


def _rates() -> dict[str, float]:
    spec = os.environ.get("BENCH_RATES", "sqlite=268,postgres=239")
    return {k: float(v) for k, v in (pair.split("=", 1) for pair in spec.split(","))}


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "hookline", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def _account(env: dict[str, str]) -> Account:
    _cli(env, "migrate")
    made = orjson.loads(_cli(env, "accounts", "create", "isolation").strip().splitlines()[-1])
    return Account(account_id=made["account_id"], api_key=made["api_key"], sample_ids=())


def _postgres_cpu(pg: PostgresServer | None) -> float:
    """CPU seconds of the PostgreSQL cluster so far: the postmaster (its reaped backends
    included) and its live children; 0 for SQLite."""
    if pg is None:
        return 0.0
    try:
        root = int((pg.data_dir / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, IndexError, ValueError):
        return 0.0
    total = 0.0
    for pid in [root, *children_of(root)]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a backend that exited meanwhile (counted in the postmaster's cutime)
        # utime, stime, and for the postmaster the reaped children's cutime and cstime.
        ticks = sum(int(f) for f in fields[11:15]) if pid == root else sum(map(int, fields[11:13]))
        total += ticks / os.sysconf("SC_CLK_TCK")
    return total


def _profile(server: Proc, tag: str, seconds: float) -> subprocess.Popen[bytes] | None:
    """With ``BENCH_PYSPY=dir``: a py-spy profile of the server over the window (raw folded
    stacks, for grepping by subsystem)."""
    out = os.environ.get("BENCH_PYSPY")
    if not out:
        return None
    spy = Path(sys.executable).parent / "py-spy"
    command = [str(spy), "record", "-p", str(server.process.pid), "-r", "200", "--format"]
    command += ["raw", "-o", f"{out}/{tag}.txt", "-d", str(int(seconds)), "--nonblocking"]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _window(
    tree: str,
    src: str,
    url: str,
    tag: str,
    noisy: bool,
    rate: float,
    seconds: float,
    receiver: Proc,
    log_dir: Path,
    pg: PostgresServer | None,
) -> Window:
    env = hookline_env(url, worker=True, PYTHONPATH=src)
    account = _account(env)
    server = start_hookline(f"serve-{tag}", env, core=SERVER_CORE, log_dir=log_dir)
    try:
        healthy = f"healthy-{tag}"
        delivery.create_webhook(server.base_url, account.api_key, f"{receiver.base_url}/{healthy}")
        if noisy:
            for kind in _noise():
                delivery.create_webhook(
                    server.base_url, account.api_key, f"{receiver.base_url}/{kind}-{tag}"
                )
        time.sleep(0.5)
        cpu = delivery.cpu_seconds(server.process.pid)
        db_cpu = _postgres_cpu(pg)
        spy = _profile(server, tag, seconds)
        plan: Any = type("P", (), {"latency_seconds": seconds})
        stats = delivery._latency_run(plan, server, account, receiver, healthy, rate)
        used = delivery.cpu_seconds(server.process.pid) - cpu
        db_used = _postgres_cpu(pg) - db_cpu
        if spy is not None:
            spy.wait(timeout=60)
    finally:
        # Killed soon after SIGTERM: a graceful stop waits out the hanging endpoint's sends (the
        # total timeout), and the next window has a fresh server and database anyway.
        server.stop(timeout=STOP_SECONDS)
    return Window(
        tree,
        noisy,
        stats["p50_ms"] or 0.0,
        stats["p99_ms"] or 0.0,
        used / max(1, stats["post_ok"]) * 1e6,
        db_used / max(1, stats["post_ok"]) * 1e6,
        delivery.receiver_stats(receiver, f"fail-{tag}")["failed"],
        stats["count"],
    )


def main() -> int:
    trees, rates = _trees(), _rates()
    backends = os.environ.get("BENCH_BACKENDS", "sqlite,postgres").split(",")
    seconds = float(os.environ.get("BENCH_SECONDS", "5"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    log_dir = Path(tempfile.mkdtemp(prefix="hookline-isolation-"))
    windows: dict[str, list[Window]] = {b: [] for b in backends}
    with running_postgres() as pg:
        pin_postgres(pg)
        receiver = start_module("receiver", "bench.receiver", core=LOAD_CORE, log_dir=log_dir)
        try:
            for i in range(rounds):
                for backend in backends:
                    for tree, src in trees.items():
                        for noisy in (False, True):
                            tag = f"{backend}-{tree}-{'noisy' if noisy else 'plain'}-{i}"
                            name = tag.replace("-", "_")
                            url = (
                                f"sqlite:///{log_dir / name}.db"
                                if backend == "sqlite"
                                else pg.create_database(name)
                            )
                            w = _window(
                                tree,
                                src,
                                url,
                                tag,
                                noisy,
                                rates[backend],
                                seconds,
                                receiver,
                                log_dir,
                                None if backend == "sqlite" else pg,
                            )
                            windows[backend].append(w)
                            print(
                                f"{tag}: p50 {w.p50:.1f} p99 {w.p99:.1f} ms, "
                                f"{w.cpu_us_per_post:,.0f} us CPU/POST "
                                f"(+{w.db_cpu_us_per_post:,.0f} PostgreSQL), "
                                f"{w.failing_attempts} failing attempts, {w.received} received",
                                flush=True,
                            )
        finally:
            receiver.stop()
    for backend in backends:
        for tree in trees:
            medians = {}
            for noisy in (False, True):
                ws = [w for w in windows[backend] if w.tree == tree and w.noisy == noisy]
                medians[noisy] = (
                    statistics.median(w.p50 for w in ws),
                    statistics.median(w.p99 for w in ws),
                    statistics.median(w.cpu_us_per_post for w in ws),
                    statistics.median(w.db_cpu_us_per_post for w in ws),
                )
            plain, loud = medians[False], medians[True]
            print(
                f"{backend} {tree}: plain p50/p99 {plain[0]:.1f}/{plain[1]:.1f} ms "
                f"({plain[2]:,.0f} + {plain[3]:,.0f} us CPU/POST); noisy {loud[0]:.1f}/"
                f"{loud[1]:.1f} ms ({loud[2]:,.0f} + {loud[3]:,.0f} us); "
                f"p99 change {loud[1] / plain[1] - 1:+.0%}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
