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
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from tests.support.postgres import PostgresServer, running_postgres

from bench import api, wrk
from bench.config import Plan, current_plan
from bench.env import CONTACT_BODY, auth_headers, hookline_env, pin_postgres, sqlite_url
from bench.figures import Figure, Run
from bench.procs import SERVER_CORE, Proc, start_hookline, start_module
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


def main() -> int:
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
