"""One machine, several processes: ``hookline serve --workers 2`` against ``--workers 1``.

``POST /v1/contacts`` on SQLite and on PostgreSQL, each with one and with two server processes
(each its own database, seeded alike), and the echo ceiling and the afternoon peer in the same
interleaved rounds; medians over rounds. The hookline servers are not pinned: they may use every
core, as ``hookline serve`` in production does. wrk (and PostgreSQL) stay on the load core in
every round, so the only change between the two figures of a backend is the number of
processes. The echo and the peer are one process each, pinned to the server core as in the API
phase. Two delivery workers against one are in ``delivery.py`` (``workers=2``).

``python -m bench.scale`` runs this phase alone and prints the figures (``BENCH_QUICK=1``: a
short smoke run; ``BENCH_SECONDS=n`` sets the seconds per wrk run).

``BENCH_TREES="A=main B=."`` makes it an interleaved A/B of source trees instead (each a git
revision, ``.`` or a directory with a ``src``, as in ``bench.ab``; ``A=main:HOOKLINE_X=1`` gives
that server a setting): for each backend of ``BENCH_BACKENDS`` (default ``sqlite,postgres``) and
tree, ``--workers 1`` and ``--workers 2``, with where each run's CPU went: every server process,
wrk and PostgreSQL, as µs per request and as the share of a core each used, and how many of
wrk's connections each server process accepted.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from tests.support.postgres import PostgresServer, running_postgres

from bench import api, wrk
from bench.ab import Variant, source_tree
from bench.config import Plan, current_plan
from bench.env import CONTACT_BODY, auth_headers, hookline_env, pin_postgres, sqlite_url
from bench.figures import Figure, Run
from bench.procs import SERVER_CORE, Proc, children_of, start_hookline, start_module
from bench.seed import seed_account
from hookline.settings import Settings

SECTION = "Processes on one machine (hookline serve --workers)"
TARGETS = {"sqlite": 1.6, "postgres": 1.4}
"""--workers 2 against --workers 1 (issue 19)."""
ECHO = "ceiling POST echo"
PEER = "peer POST naive"


def _key(backend: str, workers: int) -> str:
    return f"{backend} POST /v1/contacts --workers {workers}"


def start_targets(
    plan: Plan, pg: PostgresServer, log_dir: Path, procs: list[Proc]
) -> list[api.Target]:
    """The echo, the peer, and four hookline servers (2 backends x 1 and 2 processes)."""
    baseline = start_module("scale-echo", "bench.baseline", core=SERVER_CORE, log_dir=log_dir)
    procs.append(baseline)
    peer = api.start_peer("scale-peer", log_dir)
    procs.append(peer)
    json_headers = {"Content-Type": "application/json"}
    targets = [
        api.Target(ECHO, baseline, wrk.Request("POST", "/echo", json_headers, CONTACT_BODY)),
        api.Target(PEER, peer, wrk.Request("POST", "/contacts", json_headers, CONTACT_BODY)),
    ]
    for backend in ("sqlite", "postgres"):
        for workers in (1, 2):
            name = f"scale-{backend}-{workers}"
            url = (
                sqlite_url(log_dir, name)
                if backend == "sqlite"
                else pg.create_database(name.replace("-", "_"))
            )
            account = seed_account(Settings(database_url=url, secret_key="x"), name, plan.small)
            env = hookline_env(url, HOOKLINE_WORKERS=str(workers))
            server = start_hookline(name, env, core=None, log_dir=log_dir)
            procs.append(server)
            request = wrk.Request(
                "POST", "/v1/contacts", auth_headers(account.api_key), CONTACT_BODY
            )
            targets.append(api.Target(_key(backend, workers), server, request))
    return targets


def report(run: Run, plan: Plan, measured: dict[str, tuple[wrk.Result, float]]) -> None:
    echo, peer = measured[ECHO][0], measured[PEER][0]
    for label, key in (("POST echo (ceiling)", ECHO), ("peer: naive FastAPI + aiosqlite", PEER)):
        result, cpu_us = measured[key]
        run.add(
            Figure(
                SECTION,
                label,
                result.rps,
                "req/s",
                result.p50_ms,
                result.p99_ms,
                note=f"{cpu_us:.0f} µs CPU/req; one process on the server core",
            )
        )
    for backend in ("sqlite", "postgres"):
        one, _ = measured[_key(backend, 1)]
        for workers in (1, 2):
            result, cpu_us = measured[_key(backend, workers)]
            against = (
                f"{result.rps / peer.rps:.2f}x the peer, {result.rps / echo.rps:.2f}x the echo"
                if peer.rps and echo.rps
                else ""
            )
            errors = f"; {result.errors} errors" if result.errors else ""
            two = workers == 2
            run.add(
                Figure(
                    SECTION,
                    f"POST /v1/contacts on {backend}, --workers {workers}",
                    result.rps,
                    "req/s",
                    result.p50_ms,
                    result.p99_ms,
                    "--workers 1" if two else "peer",
                    one.rps if two else peer.rps,
                    f"≥ {TARGETS[backend]}x" if two else "",
                    (bool(one.rps) and result.rps / one.rps >= TARGETS[backend]) if two else None,
                    f"{cpu_us:.0f} µs CPU/req (all processes); {against}{errors}",
                )
            )


def api_processes(
    run: Run, plan: Plan, pg: PostgresServer, log_dir: Path, procs: list[Proc]
) -> None:
    targets = start_targets(plan, pg, log_dir, procs)
    report(run, plan, api.measure(plan, targets))


@dataclass
class _Split:
    """Where one wrk run's CPU went."""

    rps: float
    p99_ms: float
    processes_us: list[float]  # per request, the supervisor first
    processes_busy: list[float]  # share of a core
    wrk_us: float
    wrk_busy: float
    postgres_us: float
    postgres_busy: float
    connections: list[int]  # accepted by each child (by the one process with --workers 1)


def _cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_of(pid: int) -> list[int]:
    return [pid, *(grandchild for child in children_of(pid) for grandchild in _tree_of(child))]


def _connections_by_process(port: int) -> dict[int, int]:
    listing = subprocess.run(
        ["ss", "-tnpH", "state", "established", f"sport = :{port}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    counts: dict[int, int] = {}
    for line in listing.splitlines():
        if "pid=" in line:
            pid = int(line.split("pid=")[1].split(",")[0])
            counts[pid] = counts.get(pid, 0) + 1
    return counts


def _split_run(plan: Plan, target: api.Target, postmaster: int) -> _Split:
    """One wrk run of ``target``, with the CPU of each part over the same run."""
    server = target.proc.process.pid
    processes, postgres = _tree_of(server), _tree_of(postmaster)
    before = {pid: _cpu(pid) for pid in processes}
    postgres_before = sum(_cpu(pid) for pid in postgres)
    wrk_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    accepted: dict[int, int] = {}
    assert target.proc.port is not None
    counter = threading.Timer(
        plan.duration / 2, lambda: accepted.update(_connections_by_process(target.proc.port or 0))
    )
    started = time.monotonic()
    counter.start()
    result = wrk.run(
        target.proc.base_url, target.request, connections=plan.connections, seconds=plan.duration
    )
    counter.join()
    wall = time.monotonic() - started
    wrk_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = {pid: _cpu(pid) - before[pid] for pid in processes}
    postgres_used = sum(_cpu(pid) for pid in _tree_of(postmaster)) - postgres_before
    wrk_used = sum(getattr(wrk_after, f) - getattr(wrk_before, f) for f in ("ru_utime", "ru_stime"))
    per_request = 1e6 / max(1, result.requests)
    children = processes[1:] or processes
    return _Split(
        result.rps,
        result.p99_ms,
        [used[pid] * per_request for pid in processes],
        [used[pid] / wall for pid in processes],
        wrk_used * per_request,
        wrk_used / wall,
        postgres_used * per_request,
        postgres_used / wall,
        [accepted.get(pid, 0) for pid in children],
    )


def ab_trees(variants: list[Variant], backends: list[str]) -> int:
    """Interleaved rounds of ``--workers 1`` and ``2`` for every tree and backend."""
    plan = current_plan()
    seconds = os.environ.get("BENCH_SECONDS")
    if seconds:
        plan = replace(plan, duration=float(seconds))
    work = Path(tempfile.mkdtemp(prefix="hookline-bench-scale-ab-"))
    procs: list[Proc] = []
    splits: dict[str, list[_Split]] = {}
    try:
        with running_postgres() as pg:
            pin_postgres(pg)
            postmaster = int((pg.data_dir / "postmaster.pid").read_text().splitlines()[0])
            targets = []
            for backend in backends:
                for variant in variants:
                    source = source_tree(variant.rev, work)
                    for workers in (1, 2):
                        name = f"scale-{backend}-{variant.name}-{workers}"
                        url = (
                            sqlite_url(work, name)
                            if backend == "sqlite"
                            else pg.create_database(name.replace("-", "_").lower())
                        )
                        account = seed_account(
                            Settings(database_url=url, secret_key="x"), name, plan.small
                        )
                        env = {
                            **hookline_env(
                                url, HOOKLINE_WORKERS=str(workers), PYTHONPATH=str(source)
                            ),
                            **variant.env,
                        }
                        server = start_hookline(name, env, core=None, log_dir=work)
                        procs.append(server)
                        request = wrk.Request(
                            "POST", "/v1/contacts", auth_headers(account.api_key), CONTACT_BODY
                        )
                        targets.append(
                            api.Target(f"{backend} {variant.name} {workers}", server, request)
                        )
            for target in targets:
                wrk.run(
                    target.proc.base_url,
                    target.request,
                    connections=plan.connections,
                    seconds=plan.warmup,
                )
            for round_no in range(plan.rounds):
                print(f"  round {round_no + 1}/{plan.rounds}", flush=True)
                for target in targets:
                    split = _split_run(plan, target, postmaster)
                    splits.setdefault(target.key, []).append(split)
                    print(f"    {target.key}: {_describe(split)}", flush=True)
            for proc in reversed(procs):
                proc.stop()
    except BaseException:
        print(f"bench.scale: failed; process logs kept in {work}", flush=True)
        raise
    shutil.rmtree(work, ignore_errors=True)
    _print_ab(splits, variants, backends)
    return 0


def _describe(split: _Split) -> str:
    processes = " + ".join(
        f"{us:.0f} µs ({busy:.2f})"
        for us, busy in zip(split.processes_us, split.processes_busy, strict=True)
    )
    return (
        f"{split.rps:,.0f} req/s, p99 {split.p99_ms:.1f} ms; CPU/req (share of a core): "
        f"server {processes}; wrk {split.wrk_us:.0f} µs ({split.wrk_busy:.2f}); "
        f"PostgreSQL {split.postgres_us:.0f} µs ({split.postgres_busy:.2f}); "
        f"connections {split.connections}"
    )


def _print_ab(
    splits: dict[str, list[_Split]], variants: list[Variant], backends: list[str]
) -> None:
    print("\nmedians: req/s (--workers 2 / 1), server CPU µs/req, p99 ms")
    for backend in backends:
        for variant in variants:
            rates = {}
            for workers in (1, 2):
                runs = splits[f"{backend} {variant.name} {workers}"]
                rates[workers] = statistics.median(s.rps for s in runs)
                server_us = statistics.median(sum(s.processes_us) for s in runs)
                p99 = statistics.median(s.p99_ms for s in runs)
                print(
                    f"  {backend} {variant.name} --workers {workers}: {rates[workers]:,.0f} req/s, "
                    f"{server_us:.0f} µs, p99 {p99:.1f}"
                )
            ratios = [
                two.rps / one.rps
                for one, two in zip(
                    splits[f"{backend} {variant.name} 1"],
                    splits[f"{backend} {variant.name} 2"],
                    strict=True,
                )
            ]
            print(
                f"  {backend} {variant.name}: --workers 2 / 1 = {rates[2] / rates[1]:.2f}x "
                f"(per round: {', '.join(f'{r:.2f}' for r in ratios)}; "
                f"target {TARGETS[backend]}x)"
            )


def main() -> int:
    trees = os.environ.get("BENCH_TREES")
    if trees:
        backends = os.environ.get("BENCH_BACKENDS", "sqlite,postgres").split(",")
        return ab_trees([Variant.parse(text) for text in trees.split()], backends)
    plan = current_plan()
    seconds = os.environ.get("BENCH_SECONDS")
    if seconds:
        plan = replace(plan, duration=float(seconds))
    run = Run()
    log_dir = Path(tempfile.mkdtemp(prefix="hookline-bench-scale-"))
    procs: list[Proc] = []
    try:
        with running_postgres() as pg:
            pin_postgres(pg)
            try:
                api_processes(run, plan, pg, log_dir, procs)
            finally:
                for proc in reversed(procs):
                    proc.stop()
    except BaseException:
        print(f"bench.scale: failed; process logs kept in {log_dir}", flush=True)
        raise
    shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
