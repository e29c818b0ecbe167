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
from bench.procs import SERVER_CORE, Proc, children_of, start_hookline, start_module
from bench.seed import Account, seed_account
from hookline.settings import Settings


@dataclass
class Target:
    key: str
    proc: Proc
    request: wrk.Request


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its children (``hookline serve --workers N``'s)."""
    total = 0
    for each in (pid, *children_of(pid)):
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def requests_for(account: Account) -> dict[str, wrk.Request]:
    headers = auth_headers(account.api_key)
    return {
        "POST /v1/contacts": wrk.Request("POST", "/v1/contacts", headers, CONTACT_BODY),
        "GET /v1/contacts/{id}": wrk.Request(
            "GET", "/v1/contacts", headers, paths=[f"/v1/contacts/{i}" for i in account.sample_ids]
        ),
        "GET /v1/contacts?limit=50": wrk.Request("GET", "/v1/contacts?limit=50", headers),
        # Paths no earlier benchmark measured (issue 16): each request really changes something.
        "PATCH /v1/contacts/{id}": wrk.Request(
            "PATCH",
            "/v1/contacts",
            headers,
            b'{"notes":"patched UNIQUE"}',
            paths=[f"/v1/contacts/{i}" for i in account.sample_ids],
            unique=True,
        ),
        "POST /v1/contacts idempotent": wrk.Request(
            "POST",
            "/v1/contacts",
            {**headers, "Idempotency-Key": f"{wrk.UNIQUE}"},
            CONTACT_BODY,
            unique=True,
        ),
        "POST /v1/webhooks": wrk.Request(
            "POST",
            "/v1/webhooks",
            headers,
            b'{"url":"http://127.0.0.1:9/UNIQUE","events":["contact.created"]}',
            unique=True,
        ),
    }


FIXED_TARGETS = ("ceiling POST echo", "ceiling GET json", "ceiling GET list", "peer POST naive")
"""The servers without a hookline in them, measured in the same rounds."""

# Measured once per backend, on the small account only.
_SMALL_ONLY = ("POST", "PATCH")


def start_peer(name: str, log_dir: Path) -> Proc:
    """The afternoon peer (bench/peer.py) on a database of its own, on the server core."""
    database = str(log_dir / f"{name}.db")
    return start_module(
        name, "bench.peer", "--database", database, core=SERVER_CORE, log_dir=log_dir
    )


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
    peer = start_peer("peer", log_dir)
    procs.append(peer)
    targets.append(
        Target(
            "peer POST naive", peer, wrk.Request("POST", "/contacts", echo_headers, CONTACT_BODY)
        )
    )
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
            # Room for every POST /v1/webhooks the run makes (the default cap is 100).
            env = hookline_env(url, HOOKLINE_MAX_WEBHOOKS_PER_ACCOUNT="100000000")
            proc = start_hookline(
                f"api-{backend}-{size_name}", env, core=SERVER_CORE, log_dir=log_dir
            )
            procs.append(proc)
            for label, request in requests_for(account).items():
                if size_name == "1M" and label.startswith(_SMALL_ONLY):
                    continue  # size changes reads; one write figure per backend is enough
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
    for key in FIXED_TARGETS[:3]:
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
        _report_peer(run, plan, backend, measured)
        _report_unmeasured_paths(run, plan, backend, measured)
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


PEER_RATIO = 1.5
"""POST /v1/contacts against the afternoon peer (bench/peer.py), same durability (issue 19)."""
LIST_CPU_RATIO = 3.0
"""A page of 50 contacts costs at most this many GETs by id in server CPU (issue 16)."""


def _report_peer(
    run: Run, plan: Plan, backend: str, measured: dict[str, tuple[wrk.Result, float]]
) -> None:
    ours, cpu_us = measured[f"{backend} 10k POST /v1/contacts"]
    peer, peer_cpu_us = measured["peer POST naive"]
    run.add(
        Figure(
            f"Against the peer ({plan.connections} connections)",
            f"POST /v1/contacts on {backend}",
            ours.rps,
            "req/s",
            ours.p50_ms,
            ours.p99_ms,
            "FastAPI + aiosqlite, synchronous=FULL",
            peer.rps,
            f"≥ {PEER_RATIO}x, p99 ≤ 60 ms",
            bool(peer.rps) and ours.rps / peer.rps >= PEER_RATIO and ours.p99_ms <= 60.0,
            f"{cpu_us:.0f} µs CPU/req; peer {peer_cpu_us:.0f} µs",
        )
    )


def _report_unmeasured_paths(
    run: Run, plan: Plan, backend: str, measured: dict[str, tuple[wrk.Result, float]]
) -> None:
    """CPU per request of the paths speed work had not looked at, next to a GET by id."""
    _, get_cpu = measured[f"{backend} 10k GET /v1/contacts/{{id}}"]
    for label in (
        "PATCH /v1/contacts/{id}",
        "POST /v1/contacts idempotent",
        "POST /v1/webhooks",
        "GET /v1/contacts?limit=50",
    ):
        result, cpu_us = measured[f"{backend} 10k {label}"]
        is_list = label.startswith("GET")
        run.add(
            Figure(
                f"CPU per request ({plan.small:,} contacts)",
                f"{label} on {backend}",
                cpu_us,
                "µs CPU/req",
                result.p50_ms,
                result.p99_ms,
                "GET by id",
                get_cpu,
                f"≤ {LIST_CPU_RATIO:.0f}x the GET's CPU" if is_list else "",
                (cpu_us <= LIST_CPU_RATIO * get_cpu) if is_list else None,
                f"{result.rps:.0f} req/s" + (f"; {result.errors} errors" if result.errors else ""),
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
