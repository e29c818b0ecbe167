"""Scale-out on one PostgreSQL: 1 and 2 API processes (POST /v1/contacts), 1 and 2 workers.

On a 2-core machine the second process has no core of its own (it shares with PostgreSQL and
the load generator), so these figures show the mechanism working, not linear growth.
"""

from __future__ import annotations

import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import wrk
from bench.config import Plan
from bench.env import CONTACT_BODY, auth_headers, hookline_env
from bench.figures import Figure, Run
from bench.procs import LOAD_CORE, SERVER_CORE, Proc, start_hookline
from bench.seed import seed_account
from hookline.settings import Settings


def api_processes(run: Run, plan: Plan, url: str, log_dir: Path, procs: list[Proc]) -> None:
    account = seed_account(Settings(database_url=url, secret_key="x"), "scale", plan.small)
    request = wrk.Request("POST", "/v1/contacts", auth_headers(account.api_key), CONTACT_BODY)
    servers = [
        start_hookline(f"scale-api-{i}", hookline_env(url), core=core, log_dir=log_dir)
        for i, core in enumerate((SERVER_CORE, LOAD_CORE))
    ]
    procs.extend(servers)
    one: list[float] = []
    two: list[float] = []
    p99s: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(plan.rounds):
        single = wrk.run(
            servers[0].base_url, request, connections=plan.connections, seconds=plan.duration
        )
        one.append(single.rps)
        p99s[1].append(single.p99_ms)
        half = plan.connections // 2
        with ThreadPoolExecutor(2) as pool:
            both = list(
                pool.map(
                    lambda s, c=half: wrk.run(
                        s.base_url, request, connections=c, seconds=plan.duration
                    ),
                    servers,
                )
            )
        two.append(sum(r.rps for r in both))
        p99s[2].append(max(r.p99_ms for r in both))
    base = statistics.median(one)
    for count, values in ((1, one), (2, two)):
        run.add(
            Figure(
                "Scale-out on PostgreSQL",
                f"POST /v1/contacts, {count} API process(es)",
                statistics.median(values),
                "req/s",
                None,
                statistics.median(p99s[count]),
                "1 API process" if count == 2 else "",
                base if count == 2 else None,
                note=f"{plan.connections} connections in all",
            )
        )
    for server in servers:
        server.stop()
