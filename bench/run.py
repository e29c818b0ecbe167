"""``python -m bench``: start everything, measure every phase, write docs/benchmarks.md."""

from __future__ import annotations

import functools
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.postgres import PostgresServer, running_postgres

from bench import api, delivery, openloop, scale
from bench.config import Plan, current_plan
from bench.env import CONTACT_BODY, pin_postgres
from bench.figures import Figure, Run
from bench.machine import machine, versions
from bench.procs import LOAD_CORE, Proc, start_module
from bench.report import markdown, plot

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PLOT_NAME = "benchmarks-latency.png"


@contextmanager
def _cleanup(procs: list[Proc]) -> Iterator[None]:
    try:
        yield
    finally:
        for proc in reversed(procs):
            proc.stop()


def api_phase(run: Run, plan: Plan, pg: PostgresServer, log_dir: Path) -> dict[str, float]:
    """API figures and the open-loop sweep; returns the POST maxima per backend."""
    procs: list[Proc] = []
    with _cleanup(procs):
        urls = {size: pg.create_database(f"api_{size.lower()}") for size in ("10k", "1M")}
        targets = api.start_servers(plan, urls, log_dir, procs)
        measured = api.measure(plan, targets)
        api.report(run, plan, measured)
        maxima = {b: measured[f"{b} 10k POST /v1/contacts"][0].rps for b in ("sqlite", "postgres")}
        by_key = {t.key: t for t in targets}
        for backend in ("sqlite", "postgres"):
            target = by_key[f"{backend} 10k POST /v1/contacts"]
            points = []
            for fraction in plan.sweep:
                rate = max(10.0, fraction * maxima[backend])
                result = openloop.offer(
                    target.proc.base_url + "/v1/contacts",
                    rate,
                    plan.sweep_seconds,
                    headers=target.request.headers,
                    body=CONTACT_BODY,
                )
                points.append((rate, result["p50_ms"], result["p99_ms"]))
                print(
                    f"  sweep {backend} {rate:.0f}/s: p50={result['p50_ms']} "
                    f"p99={result['p99_ms']} errors={result['errors']}",
                    flush=True,
                )
            run.sweeps[f"POST /v1/contacts on {backend}"] = points
    return maxima


def delivery_phase(
    run: Run, plan: Plan, pg: PostgresServer, log_dir: Path, post_max: dict[str, float]
) -> None:
    procs: list[Proc] = []
    with _cleanup(procs):
        receiver = start_module("receiver", "bench.receiver", core=LOAD_CORE, log_dir=log_dir)
        procs.append(receiver)
        bare = delivery.client_loop(receiver, "whsec_" + "A" * 43, plan.delivery_events)
        run.add(
            Figure(
                "Delivery",
                "bare aiohttp client loop (ceiling)",
                bare["rate"],
                "events/s",
                note="64 concurrent, pre-signed bodies",
            )
        )
        rates: dict[str, float] = {}
        for backend in ("sqlite", "postgres"):
            url = (
                delivery_url(log_dir, "delivery")
                if backend == "sqlite"
                else pg.create_database("delivery")
            )
            rates[backend] = delivery.throughput(
                run, plan, backend, url, receiver, log_dir, procs, ceiling=bare["rate"]
            )
        for backend in ("sqlite", "postgres"):
            # One process doing both at full speed manages at most 1/(1/P + 1/D): the search for
            # the sustained rate starts there (deliveries at a trickle cost more than a backlog's).
            both = 1 / (1 / post_max[backend] + 1 / max(rates[backend], 1.0))
            new_url = (
                functools.partial(delivery_url, log_dir)
                if backend == "sqlite"
                else pg.create_database
            )
            delivery.latency(run, plan, backend, new_url, receiver, log_dir, procs, both)
        # Two delivery workers against one, on fresh databases, each backend (issue 19: >= 1.3x).
        for backend in ("sqlite", "postgres"):
            base = 0.0
            for workers in (1, 2):
                name = f"scale_workers_{backend}_{workers}"
                url = (
                    delivery_url(log_dir, name) if backend == "sqlite" else pg.create_database(name)
                )
                rate = delivery.throughput(
                    run,
                    plan,
                    backend,
                    url,
                    receiver,
                    log_dir,
                    procs,
                    workers=workers,
                    section="Delivery workers (1 and 2 processes)",
                    ceiling=base or None,
                    tag="-scale",
                )
                base = base or rate


def delivery_url(log_dir: Path, name: str) -> str:
    return f"sqlite:///{log_dir / name}.db"


def main() -> int:
    plan = current_plan()
    started = time.monotonic()
    run = Run(machine=machine())
    log_dir = Path(tempfile.mkdtemp(prefix="hookline-bench-"))
    print(f"bench: {'QUICK ' if plan.quick else ''}run, logs in {log_dir}", flush=True)
    try:
        with running_postgres() as pg:
            pin_postgres(pg)
            run.versions = versions(pg.psql("SHOW server_version"))
            print("bench: API phase", flush=True)
            post_max = api_phase(run, plan, pg, log_dir)
            print("bench: delivery phase", flush=True)
            delivery_phase(run, plan, pg, log_dir, post_max)
            print("bench: scale-out phase", flush=True)
            procs: list[Proc] = []
            with _cleanup(procs):
                scale.api_processes(run, plan, pg, log_dir, procs)
    except BaseException:
        print(f"bench: failed; process logs kept in {log_dir}", flush=True)
        raise
    run.notes.append(f"whole run took {(time.monotonic() - started) / 60:.1f} min")
    write(run, plan)
    shutil.rmtree(log_dir, ignore_errors=True)
    return 0


def write(run: Run, plan: Plan, docs: Path = DOCS) -> Path:
    docs.mkdir(exist_ok=True)
    has_plot = plot(run, docs / PLOT_NAME) if run.sweeps else False
    target = docs / "benchmarks.md"
    target.write_text(markdown(run, plan, PLOT_NAME if has_plot else None))
    print(f"bench: wrote {target}", flush=True)
    return target
