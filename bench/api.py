"""API figures: POST/GET/list on SQLite and PostgreSQL at 10k and 1M contacts, with ceilings.

Every server runs at once, each pinned to the server core (idle while another is measured);
each round measures every figure once, and the table shows the median over rounds, so a drift
in the host's speed hits a figure and its ceiling alike.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench import wrk
from bench.config import Plan
from bench.env import CONTACT_BODY, auth_headers, hookline_env, sqlite_url
from bench.figures import Figure, Run
from bench.procs import SERVER_CORE, Proc, start_hookline, start_module
from bench.seed import Account, seed_account
from hookline.settings import Settings


@dataclass
class Target:
    key: str
    proc: Proc
    request: wrk.Request


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _requests(account: Account) -> dict[str, wrk.Request]:
    headers = auth_headers(account.api_key)
    return {
        "POST /v1/contacts": wrk.Request("POST", "/v1/contacts", headers, CONTACT_BODY),
        "GET /v1/contacts/{id}": wrk.Request(
            "GET", "/v1/contacts", headers, paths=[f"/v1/contacts/{i}" for i in account.sample_ids]
        ),
        "GET /v1/contacts?limit=50": wrk.Request("GET", "/v1/contacts?limit=50", headers),
    }


def start_servers(
    plan: Plan, pg_url_for: dict[str, str], log_dir: Path, procs: list[Proc]
) -> list[Target]:
    """Seed every database and start every server; ``procs`` collects them for clean-up."""
    baseline = start_module("baseline", "bench.baseline", core=SERVER_CORE, log_dir=log_dir)
    procs.append(baseline)
    echo_headers = {"Content-Type": "application/json"}
    targets = [
        Target(
            "ceiling POST echo", baseline, wrk.Request("POST", "/echo", echo_headers, CONTACT_BODY)
        ),
        Target("ceiling GET json", baseline, wrk.Request("GET", "/contact", {})),
        Target("ceiling GET list", baseline, wrk.Request("GET", "/list", {})),
    ]
    for size_name, size in (("10k", plan.small), ("1M", plan.large)):
        for backend in ("sqlite", "postgres"):
            url = (
                pg_url_for[size_name]
                if backend == "postgres"
                else sqlite_url(log_dir, f"api-{size_name}")
            )
            started = time.monotonic()
            account = seed_account(Settings(database_url=url, secret_key="x"), "bench", size)
            print(
                f"  seeded {size:,} contacts on {backend} in {time.monotonic() - started:.0f}s",
                flush=True,
            )
            proc = start_hookline(
                f"api-{backend}-{size_name}", hookline_env(url), core=SERVER_CORE, log_dir=log_dir
            )
            procs.append(proc)
            for label, request in _requests(account).items():
                if size_name == "1M" and label.startswith("POST"):
                    continue  # size changes reads; one POST figure per backend is enough
                targets.append(Target(f"{backend} {size_name} {label}", proc, request))
    return targets


def measure(plan: Plan, targets: list[Target]) -> dict[str, tuple[wrk.Result, float]]:
    """Median result and server CPU µs per request of every target over ``plan.rounds``."""
    results: dict[str, list[wrk.Result]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    for target in targets:  # warm caches, JITs of the mind, and connection pools
        wrk.run(
            target.proc.base_url, target.request, connections=plan.connections, seconds=plan.warmup
        )
    for round_no in range(plan.rounds):
        print(f"  API round {round_no + 1}/{plan.rounds}", flush=True)
        for target in targets:
            before = _cpu_seconds(target.proc.process.pid)
            result = wrk.run(
                target.proc.base_url,
                target.request,
                connections=plan.connections,
                seconds=plan.duration,
            )
            used = _cpu_seconds(target.proc.process.pid) - before
            results[target.key].append(result)
            cpu[target.key].append(used * 1e6 / max(1, result.requests))
    return {
        key: (wrk.median(runs), sorted(cpu[key])[len(cpu[key]) // 2])
        for key, runs in results.items()
    }


CEILINGS = {
    "POST /v1/contacts": ("ceiling POST echo", 0.33, 60.0),
    "GET /v1/contacts/{id}": ("ceiling GET json", 0.5, None),
    "GET /v1/contacts?limit=50": ("ceiling GET list", None, None),
}


def report(run: Run, plan: Plan, measured: dict[str, tuple[wrk.Result, float]]) -> None:
    for key in ("ceiling POST echo", "ceiling GET json", "ceiling GET list"):
        result, cpu_us = measured[key]
        run.add(
            Figure(
                "API ceilings",
                key.removeprefix("ceiling "),
                result.rps,
                "req/s",
                result.p50_ms,
                result.p99_ms,
                note=f"{cpu_us:.0f} µs CPU/req",
            )
        )
    for backend in ("sqlite", "postgres"):
        for label, (ceiling_key, min_ratio, max_p99) in CEILINGS.items():
            result, cpu_us = measured[f"{backend} 10k {label}"]
            ceiling = measured[ceiling_key][0].rps
            target_text, met = _target(result, ceiling, min_ratio, max_p99)
            errors = f"; {result.errors} errors" if result.errors else ""
            run.add(
                Figure(
                    f"API ({plan.connections} connections, {plan.small:,} contacts)",
                    f"{label} on {backend}",
                    result.rps,
                    "req/s",
                    result.p50_ms,
                    result.p99_ms,
                    ceiling_key.removeprefix("ceiling "),
                    ceiling,
                    target_text,
                    met,
                    f"{cpu_us:.0f} µs CPU/req{errors}",
                )
            )
        for label in ("GET /v1/contacts/{id}", "GET /v1/contacts?limit=50"):
            small, _ = measured[f"{backend} 10k {label}"]
            large, cpu_us = measured[f"{backend} 1M {label}"]
            change = large.rps / small.rps - 1 if small.rps else None
            met = change is not None and abs(change) <= 0.2
            run.add(
                Figure(
                    f"Size ({plan.small:,} vs {plan.large:,} contacts)",
                    f"{label} on {backend} at {plan.large:,}",
                    large.rps,
                    "req/s",
                    large.p50_ms,
                    large.p99_ms,
                    f"same at {plan.small:,}",
                    small.rps,
                    "within 20%",
                    met,
                    f"{cpu_us:.0f} µs CPU/req",
                )
            )


def _target(
    result: wrk.Result, ceiling: float, min_ratio: float | None, max_p99: float | None
) -> tuple[str, bool | None]:
    parts, met = [], None
    if min_ratio is not None:
        parts.append(f"≥ {min_ratio}x")
        met = bool(ceiling) and result.rps / ceiling >= min_ratio
    if max_p99 is not None:
        parts.append(f"p99 ≤ {max_p99:.0f} ms")
        met = bool(met) and result.p99_ms <= max_p99
    return ", ".join(parts), met
