"""An interleaved A/B of the delivery worker: drain a preloaded outbox with each build.

    python -m bench.deliveryab A=main B=. --backend sqlite,postgres --workers 1,2

Variants are parsed as in ``bench.ab`` (``NAME=REV[:ENV=VALUE,...]``). Each round, for every
backend and number of workers, every variant gets a fresh database with one webhook (to the
receiver) and ``--events`` undispatched events, then ``--workers`` ``hookline worker``
processes of its build (one: the server core; two: one per core, as in ``bench.delivery``).
The figures are the receipts' rate (first to last receipt) and the workers' CPU per delivery
from the first receipt on (start-up excluded), medians over ``BENCH_ROUNDS`` (default 3), with
each side's share of the drain on a core and waiting for one (busy / run queue: the workers',
and the load core's, the receiver and PostgreSQL; a run queue there means that core, not the
worker's rounds, bounds the drain). Each
round also runs the bare aiohttp client loop (``bench.clientloop``, on the server core, to the
same receiver, ``--events`` requests), the ceiling ``bench.delivery`` compares with: the table
gives each variant's median rate against the loop's median ("vs loop", target >= 0.5x with one
worker) and two workers' against one's ("vs 1 worker", target >= 1.3x).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

from tests.support.postgres import running_postgres

from bench.ab import Variant, source_tree
from bench.delivery import (
    client_loop,
    cpu_seconds,
    create_webhook,
    preload_events,
    receiver_stats,
    start_workers,
    wait_received,
)
from bench.env import hookline_env, pin_postgres, sqlite_url
from bench.procs import (
    LOAD_CORE,
    SERVER_CORE,
    Proc,
    children_of,
    start_hookline,
    start_module,
)
from bench.seed import seed_account
from hookline.settings import Settings

FIRST_RECEIPT_TIMEOUT = 60.0
# BENCH_PROFILE=dir: py-spy (if installed) records every worker of every drain there, from the
# first receipt on (BENCH_PROFILE_GIL=1: only samples holding the GIL).
PROFILE_GIL = os.environ.get("BENCH_PROFILE_GIL", "") == "1"
PROFILE_DIR = os.environ.get("BENCH_PROFILE", "")


def _profile(proc: Proc, name: str) -> subprocess.Popen[bytes]:
    out = Path(PROFILE_DIR) / f"{name}.txt"
    command = ["py-spy", "record", "--pid", str(proc.process.pid), "--format", "raw"]
    command += ["--gil"] if PROFILE_GIL else ["--threads"]
    return subprocess.Popen(
        [*command, "--rate", "200", "--output", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _load_pids(receiver: Proc, postmaster: int | None) -> list[int]:
    """The receiver and PostgreSQL's live processes: what runs on the load core."""
    pids = [receiver.process.pid]
    if postmaster is not None:
        pids += [postmaster, *children_of(postmaster)]
    return pids


def _load_cpu(receiver: Proc, postmaster: int | None) -> float:
    """CPU seconds so far of the receiver and PostgreSQL's live processes (the load core)."""
    total = 0.0
    for pid in _load_pids(receiver, postmaster):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += cpu_seconds(pid)
    return total


def _load_runqueue(receiver: Proc, postmaster: int | None) -> float:
    """Seconds the load core's processes so far spent runnable but waiting for a core
    (``_runqueue_seconds``): with their CPU, whether that core was the drain's bound."""
    total = 0.0
    for pid in _load_pids(receiver, postmaster):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += _runqueue_seconds(pid)
    return total


def _runqueue_seconds(pid: int) -> float:
    """Seconds the process's threads so far spent runnable but waiting for a core
    (``/proc/<pid>/task/*/schedstat``, 2nd field): time another process had the core."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


Drain = tuple[float, float, int, float, float, float, float, float, float]


def _drain(
    url: str,
    name: str,
    receiver: Proc,
    postmaster: int | None,
    env: dict[str, str],
    workers: int,
    events: int,
    work: Path,
) -> Drain:
    """Of one drain: deliveries/s, worker CPU µs per delivery, duplicates, the receiver's and
    PostgreSQL's CPU µs per delivery, and each worker's share of the drain on a core (busy) and
    runnable but waiting for one (run queue): busy well below 1 with a small run-queue share
    means the worker waited on I/O (the database, the receiver), not for CPU. Last, the same
    two shares of the receiver's and PostgreSQL's processes together (the load core's), and the
    receiver's own CPU µs per delivery (the load core's figure less it is PostgreSQL's)."""
    # Each build migrates its own database: the schema is part of what is compared (an index
    # of one build must not speed up the other's claims).
    subprocess.run(
        [sys.executable, "-m", "hookline", "migrate"],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        timeout=120,
    )
    account = seed_account(Settings(database_url=url, secret_key="x"), name, 0, migrate=False)
    api = start_hookline(f"api-{name}", env, core=SERVER_CORE, log_dir=work)
    try:
        create_webhook(api.base_url, account.api_key, f"{receiver.base_url}/{name}")
    finally:
        api.stop()
    preload_events(url, account.account_id, events)
    started = start_workers(name, env, workers, work)
    spies: list[subprocess.Popen[bytes]] = []
    try:
        deadline = time.monotonic() + FIRST_RECEIPT_TIMEOUT
        while receiver_stats(receiver, name)["count"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        if PROFILE_DIR:  # the drain only: start-up and imports are not delivery work
            spies = [_profile(proc, f"{name}_w{i}") for i, proc in enumerate(started)]
        cpu0 = sum(cpu_seconds(p.process.pid) for p in started)
        queued0 = sum(_runqueue_seconds(p.process.pid) for p in started)
        load0 = _load_cpu(receiver, postmaster)
        received0 = cpu_seconds(receiver.process.pid)
        waited0 = _load_runqueue(receiver, postmaster)
        count0, clock0 = receiver_stats(receiver, name)["count"], time.monotonic()
        stats = wait_received(receiver, name, events)
        cpu1 = sum(cpu_seconds(p.process.pid) for p in started)
        queued1 = sum(_runqueue_seconds(p.process.pid) for p in started)
        load1 = _load_cpu(receiver, postmaster)
        received1 = cpu_seconds(receiver.process.pid)
        waited1 = _load_runqueue(receiver, postmaster)
        elapsed = max(1e-9, time.monotonic() - clock0)
        wall = elapsed * workers
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        for proc in started:
            proc.stop()
    span = stats["last"] - stats["first"] if stats["count"] > 1 else 0.0
    rate = stats["count"] / span if span else 0.0
    delivered = max(1, stats["count"] - count0)
    per = (cpu1 - cpu0) * 1e6 / delivered
    lost = events - stats["unique"]
    if lost:
        print(f"  {name}: {lost} LOST", flush=True)
    load = (load1 - load0) * 1e6 / delivered
    return (
        rate,
        per,
        stats["duplicates"],
        load,
        (cpu1 - cpu0) / wall,
        (queued1 - queued0) / wall,
        (load1 - load0) / elapsed,
        (waited1 - waited0) / elapsed,
        (received1 - received0) * 1e6 / delivered,
    )


def _table(
    variants: list[Variant],
    backends: list[str],
    counts: list[int],
    runs: dict[tuple[str, int, str], list[Drain]],
    loop: float,
) -> None:
    print(f"bare aiohttp client loop (median): {loop:,.0f}/s")
    print(
        "| backend | workers | variant | deliveries/s | vs first | vs loop | vs 1 worker"
        " | worker CPU µs/delivery | receiver + PostgreSQL CPU µs/delivery"
        " | worker busy / run queue | load core busy / run queue |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rate_of = {key: statistics.median(r[0] for r in got) for key, got in runs.items()}
    for backend in backends:
        for workers in counts:
            first = rate_of[(backend, workers, variants[0].name)]
            for variant in [v.name for v in variants]:
                got = runs[(backend, workers, variant)]
                rate = rate_of[(backend, workers, variant)]
                one = rate_of.get((backend, 1, variant))
                scale = f"{rate / one:.2f}x" if one and workers > 1 else ""
                cpu = statistics.median(r[1] for r in got)
                load = statistics.median(r[3] for r in got)
                busy = statistics.median(r[4] for r in got)
                queued = statistics.median(r[5] for r in got)
                load_busy = statistics.median(r[6] for r in got)
                load_queued = statistics.median(r[7] for r in got)
                print(
                    f"| {backend} | {workers} | {variant} | {rate:,.0f} | {rate / first:.2f}x"
                    f" | {rate / loop:.2f}x | {scale}"
                    f" | {cpu:,.0f} ({' '.join(f'{r[1]:.0f}' for r in got)}) | {load:,.0f}"
                    f" | {busy:.2f} / {queued:.2f} | {load_busy:.2f} / {load_queued:.2f} |"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", type=Variant.parse)
    parser.add_argument("--backend", default="sqlite,postgres")
    parser.add_argument("--workers", default="1")
    parser.add_argument("--events", type=int, default=4000)
    args = parser.parse_args()
    backends = args.backend.split(",")
    counts = [int(n) for n in args.workers.split(",")]
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    work = Path(tempfile.mkdtemp(prefix="hookline-bench-dab-"))
    runs: dict[tuple[str, int, str], list[Drain]] = defaultdict(list)
    loops: list[float] = []
    try:
        with ExitStack() as stack:
            pg = stack.enter_context(running_postgres()) if "postgres" in backends else None
            postmaster = None
            if pg is not None:
                pin_postgres(pg)
                postmaster = int((pg.data_dir / "postmaster.pid").read_text().splitlines()[0])
            receiver = start_module("receiver", "bench.receiver", core=LOAD_CORE, log_dir=work)
            stack.callback(receiver.stop)
            envs = {
                v.name: dict(PYTHONPATH=str(source_tree(v.rev, work / "src")), **v.env)
                for v in args.variants
            }
            secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
            for round_no in range(rounds):
                loop = client_loop(receiver, secret, args.events)
                loops.append(float(loop["rate"]))
                print(f"  r{round_no} bare aiohttp loop: {loop['rate']:,.0f}/s", flush=True)
                names = [v.name for v in args.variants]
                if round_no % 2:
                    names.reverse()
                for backend in backends:
                    for workers in counts:
                        for variant in names:
                            tag = f"d{round_no}_{backend}_{workers}_{variant.lower()}"
                            url = pg.create_database(tag) if backend == "postgres" and pg else ""
                            url = url or sqlite_url(work, tag)
                            # A variant's own settings win over the bench's.
                            env = {
                                **hookline_env(
                                    url, HOOKLINE_DELIVERY_PER_ENDPOINT_CONCURRENCY="64"
                                ),
                                **envs[variant],
                            }
                            result = _drain(
                                url, tag, receiver, postmaster, env, workers, args.events, work
                            )
                            runs[(backend, workers, variant)].append(result)
                            print(
                                f"  {tag}: {result[0]:,.0f}/s {result[1]:,.0f} µs/delivery"
                                f" dup={result[2]} load core {result[3]:,.0f} µs/delivery"
                                f" worker busy {result[4]:.2f} run queue {result[5]:.2f}"
                                f" load core busy {result[6]:.2f} run queue {result[7]:.2f}"
                                f" (receiver {result[8]:,.0f} µs/delivery)",
                                flush=True,
                            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _table(args.variants, backends, counts, runs, statistics.median(loops))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
