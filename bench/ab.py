"""An interleaved A/B of ``hookline serve`` builds: the same requests, the same run, medians.

    python -m bench.ab A=main B=. --requests post,get,list --backend sqlite
    python -m bench.ab A=. B=.:HOOKLINE_LOG_LEVEL=INFO --requests post

Each variant is ``NAME=REV[:ENV=VALUE,...]``: ``REV`` is a git revision whose ``src/`` is
exported (``git archive``) to a temporary directory and put first on the server's
``PYTHONPATH``, ``.`` for this checkout as it is, or a directory holding a ``src`` (a variant
made by hand); the environment settings go to that server
only. Every server gets a database of its own, seeded alike, and runs pinned to the server core
(wrk on the load core, as in ``bench.api``). Each round measures every (request, variant) pair
once, variants alternating, so a drift of the shared host hits all of them alike; the table
shows medians over rounds of the server's CPU µs per request (``/proc``), req/s and latency, and
each variant's CPU against the first's. ``BENCH_SECONDS`` (default 4) per wrk run,
``BENCH_ROUNDS`` (default 5).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from tests.support.postgres import running_postgres

from bench import wrk
from bench.api import _cpu_seconds, requests_for
from bench.env import hookline_env, pin_postgres, sqlite_url
from bench.procs import SERVER_CORE, Proc, start_hookline
from bench.seed import seed_account
from hookline.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
REQUESTS = {
    "post": "POST /v1/contacts",
    "get": "GET /v1/contacts/{id}",
    "list": "GET /v1/contacts?limit=50",
    "patch": "PATCH /v1/contacts/{id}",
    "idempotent": "POST /v1/contacts idempotent",
    "webhook": "POST /v1/webhooks",
}


@dataclass(frozen=True)
class Variant:
    name: str
    rev: str
    env: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> Variant:
        name, _, spec = text.partition("=")
        rev, _, settings = spec.partition(":")
        env = dict(item.split("=", 1) for item in settings.split(",") if item)
        return cls(name, rev or ".", env)


def source_tree(rev: str, into: Path) -> Path:
    """The ``src`` directory of ``rev`` (``.``: this checkout's; a directory: its ``src``)."""
    if rev == ".":
        return ROOT / "src"
    if Path(rev).is_dir():
        return Path(rev) / "src"
    target = into / rev.replace("/", "_")
    if not target.exists():
        target.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target / "src"


def _measure(
    servers: dict[str, tuple[Proc, dict[str, wrk.Request]]],
    labels: list[str],
    rounds: int,
    seconds: float,
) -> dict[tuple[str, str], list[tuple[float, wrk.Result]]]:
    runs: dict[tuple[str, str], list[tuple[float, wrk.Result]]] = defaultdict(list)
    for proc, requests in servers.values():
        for label in labels:
            wrk.run(proc.base_url, requests[label], connections=64, seconds=1)
    for round_no in range(rounds):
        names = list(servers)
        if round_no % 2:
            names.reverse()  # neither variant always goes first
        for label in labels:
            for name in names:
                proc, requests = servers[name]
                before = _cpu_seconds(proc.process.pid)
                result = wrk.run(proc.base_url, requests[label], connections=64, seconds=seconds)
                used = _cpu_seconds(proc.process.pid) - before
                runs[(label, name)].append((used * 1e6 / max(1, result.requests), result))
        print(f"  round {round_no + 1}/{rounds} done", flush=True)
    return runs


def _table(
    runs: dict[tuple[str, str], list[tuple[float, wrk.Result]]],
    labels: list[str],
    names: list[str],
) -> str:
    lines = [
        "| request | variant | CPU µs/req | vs first | req/s | p50 ms | p99 ms | CPU per round |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label in labels:
        first = statistics.median(cpu for cpu, _ in runs[(label, names[0])])
        for name in names:
            measured = runs[(label, name)]
            cpu = statistics.median(c for c, _ in measured)
            result = wrk.median([r for _, r in measured])
            each = " ".join(f"{c:.0f}" for c, _ in measured)
            errors = f" ({result.errors} errors)" if result.errors else ""
            lines.append(
                f"| {label} | {name} | {cpu:.0f} | {cpu / first:.2f}x | {result.rps:,.0f}{errors}"
                f" | {result.p50_ms:.1f} | {result.p99_ms:.1f} | {each} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", type=Variant.parse)
    parser.add_argument("--requests", default="post")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--contacts", type=int, default=10_000)
    args = parser.parse_args()
    labels = [REQUESTS[key] for key in args.requests.split(",")]
    seconds = float(os.environ.get("BENCH_SECONDS", "4"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "5"))
    work = Path(tempfile.mkdtemp(prefix="hookline-bench-ab-"))
    servers: dict[str, tuple[Proc, dict[str, wrk.Request]]] = {}
    try:
        with ExitStack() as stack:
            pg = stack.enter_context(running_postgres()) if args.backend == "postgres" else None
            if pg is not None:
                pin_postgres(pg)
            for variant in args.variants:
                name = variant.name.lower()
                url = pg.create_database(f"ab_{name}") if pg else sqlite_url(work, f"ab-{name}")
                settings = Settings(database_url=url, secret_key="x")
                account = seed_account(settings, f"ab-{name}", args.contacts)
                source = source_tree(variant.rev, work / "src")
                env = hookline_env(
                    url,
                    HOOKLINE_MAX_WEBHOOKS_PER_ACCOUNT="100000000",
                    PYTHONPATH=str(source),
                    **variant.env,
                )
                proc = start_hookline(f"ab-{name}", env, core=SERVER_CORE, log_dir=work)
                stack.callback(proc.stop)
                servers[variant.name] = (proc, requests_for(account))
            runs = _measure(servers, labels, rounds, seconds)
            print(_table(runs, labels, list(servers)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
