"""What a delivery drain costs PostgreSQL, statement by statement.

    python -m bench.deliverysql [--events 10000] [--workers 1] [--explain-ms 6]

One drain as in ``bench.deliveryab`` (a fresh database, one webhook to the receiver, ``--events``
preloaded events, ``hookline worker`` pinned as in the bench), on a PostgreSQL started with
``pg_stat_statements`` (and ``auto_explain`` for statements slower than ``--explain-ms``, plans
with ANALYZE and BUFFERS in ``--log``). Prints the drain's rate and, per statement, calls, total
time, time per delivery, plans and planning time per delivery (``track_planning``), rows,
rows per call and WAL bytes per delivery: which statement's cost grows with what; then the
totals of every statement, and each delivery table's inserts, updates (how many HOT) and size.
Times are wall time inside PostgreSQL, which shares its core with the receiver: compare them
within a run. Run it under the bench lock
(``flock /work/wt/bench.lock``).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from tests.support.postgres import PostgresServer, running_postgres

from bench.delivery import (
    api_only_server,
    create_webhook,
    preload_events,
    start_workers,
    wait_received,
)
from bench.env import hookline_env, pin_postgres
from bench.procs import LOAD_CORE, Proc, start_module
from bench.seed import seed_account
from hookline.settings import Settings

DATABASE = "drain"
_STATEMENTS = """
SELECT toplevel, calls, round(total_exec_time::numeric, 1) AS ms,
    round((total_exec_time * 1000 / {events})::numeric, 1) AS us_per_delivery,
    plans, round((total_plan_time * 1000 / {events})::numeric, 1) AS plan_us_per_delivery,
    rows, round(rows::numeric / nullif(calls, 0), 1) AS rows_per_call,
    round(wal_bytes / {events}) AS wal_bytes_per_delivery,
    left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS statement
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{database}')
ORDER BY total_exec_time + total_plan_time DESC LIMIT 40
"""
_TOTALS = """
SELECT sum(calls) AS calls, round(sum(total_exec_time)::numeric, 1) AS exec_ms,
    round((sum(total_exec_time) * 1000 / {events})::numeric, 1) AS exec_us_per_delivery,
    sum(plans) AS plans, round(sum(total_plan_time)::numeric, 1) AS plan_ms,
    round((sum(total_plan_time) * 1000 / {events})::numeric, 1) AS plan_us_per_delivery,
    round(sum(wal_bytes) / {events}) AS wal_bytes_per_delivery
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{database}')
"""
# Row versions per table: how many updates were HOT (no index entry written), and the sizes.
_TABLES = """
SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del,
    pg_size_pretty(pg_relation_size(relid)) AS heap,
    pg_size_pretty(pg_indexes_size(relid)) AS indexes
FROM pg_stat_user_tables
WHERE relname IN ('deliveries', 'delivery_attempts', 'events', 'attempt_rollups', 'webhooks')
ORDER BY relname
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--explain-ms", type=int, default=6)
    parser.add_argument("--log", default="", help="copy PostgreSQL's log (the plans) here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hookline-bench-dsql-"))
    try:
        with running_postgres() as pg:
            with (pg.data_dir / "postgresql.conf").open("a") as conf:
                conf.write(
                    "shared_preload_libraries = 'pg_stat_statements,auto_explain'\n"
                    "pg_stat_statements.track = all\npg_stat_statements.track_planning = on\n"
                    f"auto_explain.log_min_duration = '{args.explain_ms}ms'\n"
                    "auto_explain.log_analyze = on\nauto_explain.log_buffers = on\n"
                    "log_min_messages = log\n"
                )
            pg.stop()
            pg.start()
            pin_postgres(pg)
            receiver = start_module("receiver", "bench.receiver", core=LOAD_CORE, log_dir=work)
            try:
                _drain(pg, receiver, args.events, args.workers, work)
            finally:
                receiver.stop()
                if args.log:
                    shutil.copy(pg.log_path, args.log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _drain(pg: PostgresServer, receiver: Proc, events: int, workers: int, work: Path) -> None:
    url = pg.create_database(DATABASE)
    pg.psql("CREATE EXTENSION pg_stat_statements", DATABASE)
    account = seed_account(Settings(database_url=url, secret_key="x"), DATABASE, 0)
    api = api_only_server(url, work, "api-drain")
    try:
        create_webhook(api.base_url, account.api_key, f"{receiver.base_url}/{DATABASE}")
    finally:
        api.stop()
    preload_events(url, account.account_id, events)
    pg.psql("SELECT pg_stat_statements_reset()", DATABASE)
    env = hookline_env(url, HOOKLINE_DELIVERY_PER_ENDPOINT_CONCURRENCY="64")
    started = start_workers(DATABASE, env, workers, work)
    try:
        stats = wait_received(receiver, DATABASE, events)
    finally:
        for proc in started:
            proc.stop()
    span = (stats["last"] - stats["first"]) or 1e-9
    print(f"{stats['count'] / span:,.0f} deliveries/s, {stats['duplicates']} duplicates")
    header = "top|calls|ms|us/delivery|plans|plan us/delivery|rows|rows/call|WAL B/delivery|what"
    print(header)
    print(pg.psql(_STATEMENTS.format(events=events, database=DATABASE), DATABASE))
    print("calls|exec ms|exec us/delivery|plans|plan ms|plan us/delivery|WAL B/delivery")
    print(pg.psql(_TOTALS.format(events=events, database=DATABASE), DATABASE))
    print("table|inserted|updated|HOT updated|deleted|heap|indexes")
    print(pg.psql(_TABLES, DATABASE))


if __name__ == "__main__":
    raise SystemExit(main())
