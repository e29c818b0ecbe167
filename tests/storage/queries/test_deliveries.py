"""``storage.queries.deliveries``: the claim's two forms take the same deliveries.

The claim is written twice (``PostgresDeliveries.claim``, one statement;
``SQLiteDeliveries.claim``, three).
``tests/delivery/test_manager.py`` runs every claim test on both backends; here both forms run
on the same rows, on PostgreSQL (the SQLite form's statements are plain Core, so they run
there too), over random scenarios, and must lease the same deliveries and return the same
claims in the same order.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import orjson
import pytest
from sqlalchemy import insert, make_url, select

from hookline import ids
from hookline.delivery import manager
from hookline.storage.connector import Connection
from hookline.storage.db import Database, fetch_all
from hookline.storage.deliverystore import PostgresDeliveries, SQLiteDeliveries
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import deliveries, events, webhooks
from hookline.storage.queries import deliveries as sql
from hookline.storage.statements import compiled_for
from hookline.timeutil import utcnow
from tests.conftest import make_settings, new_account
from tests.storage.queries.scenarios import RollBack, event_row, replace_rows, webhook_row

SCENARIOS = 60
OPEN_AFTER = 10
HOLD = timedelta(seconds=30)
WORKER = "w-claiming"

Form = Callable[[Connection, dict[str, Any]], Awaitable[list[Any]]]


FORMS: dict[str, Form] = {
    "postgres": PostgresDeliveries().claim,
    "sqlite": SQLiteDeliveries().claim,
}


def _due_time(rng: random.Random, now: datetime) -> datetime:
    # Whole ten seconds, so several deliveries share a due time (ties go by id in both forms);
    # some in the future.
    return now - timedelta(seconds=10 * rng.randint(-3, 12))


async def _seed(db: Database, account_id: str, rng: random.Random, now: datetime) -> list[str]:
    """A fresh set of webhooks and deliveries in every state a claim looks at; returns the
    webhook ids."""
    hook_rows: list[dict[str, Any]] = []
    event_rows: list[dict[str, Any]] = []
    delivery_rows: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 6)):
        circuit = {
            "is_active": rng.random() < 0.85,
            "rate_limit": 5 if rng.random() < 0.1 else None,  # claimed elsewhere
            # The circuit: closed, open with its probe due, open with the probe ahead.
            "consecutive_failures": rng.choice([0, 0, 3, OPEN_AFTER, 40]),
            "next_probe_at": rng.choice([None, now - timedelta(seconds=5), now + HOLD]),
        }
        hook_rows.append(webhook_row(account_id, now, **circuit))
        hook = hook_rows[-1]["id"]
        for _ in range(rng.randint(0, 8)):
            event_rows.append(event_row(account_id, now, "contact.created", {"n": len(event_rows)}))
            event = event_rows[-1]["id"]
            lease = rng.choice([None, None, None, "expired", "live"])
            delivery_rows.append(
                {
                    "id": ids.delivery_id(),
                    "account_id": account_id,
                    "webhook_id": hook,
                    "event_id": event,
                    "event_type": "contact.created",
                    "status": rng.choice(["pending"] * 6 + ["succeeded", "failed"]),
                    "attempts": rng.randint(0, 3),
                    "next_attempt_at": _due_time(rng, now),
                    "leased_by": None if lease is None else "another-worker",
                    "leased_until": None
                    if lease is None
                    else now + timedelta(seconds=-5 if lease == "expired" else 30),
                    "created_at": now,
                    "updated_at": now,
                }
            )
    await replace_rows(db, account_id, hook_rows, event_rows, delivery_rows)
    return [str(row["id"]) for row in hook_rows]


def _request(rng: random.Random, hooks: list[str], now: datetime) -> dict[str, Any]:
    per_endpoint = rng.randint(1, 4)
    busy = {hook: rng.randint(0, per_endpoint + 1) for hook in hooks if rng.random() < 0.4}
    return sql.claim_params(
        worker=WORKER,
        now=now,
        until=now + timedelta(seconds=30),
        limit=rng.randint(1, 12),
        per_endpoint=per_endpoint,
        busy=busy,
        saturated=sorted(hook for hook, n in busy.items() if n >= per_endpoint),
        open_after=OPEN_AFTER,
        probe_room=1,
    )


# The columns of a claim (SQLite's form also returns the rows' due times, which it sorts by).
CLAIM_COLUMNS = tuple(sql.CLAIMS.statement.selected_columns.keys())  # type: ignore[attr-defined]


def _claim(row: Any) -> tuple[Any, ...]:
    return tuple(getattr(row, name) for name in CLAIM_COLUMNS)


async def _claimed(
    db: Database, form: Form, params: dict[str, Any], account_id: str
) -> tuple[list[Any], Any, Any]:
    """What ``form`` returns and the leases and probe holds it leaves, then rolled back."""
    seen: tuple[list[Any], Any, Any] = ([], [], [])
    with pytest.raises(RollBack):
        async with db.begin() as conn:
            claims = [_claim(row) for row in await form(conn, params)]
            leases = await conn.execute(
                select(deliveries.c.id, deliveries.c.leased_by, deliveries.c.leased_until)
                .where(deliveries.c.leased_by == WORKER)
                .order_by(deliveries.c.id)
            )
            # Probes taken hold their webhook's next one back, in both forms.
            holds = await conn.execute(
                select(webhooks.c.id, webhooks.c.next_probe_at)
                .where(webhooks.c.account_id == account_id)
                .order_by(webhooks.c.id)
            )
            seen = (claims, [tuple(row) for row in leases], [tuple(row) for row in holds])
            raise RollBack
    return seen


async def test_both_forms_of_the_claim_lease_and_return_the_same_deliveries(
    pg_db: Database,
) -> None:
    account = (await new_account(pg_db)).id
    claimed, cut_short = 0, 0
    for seed in range(SCENARIOS):
        rng = random.Random(seed)
        now = utcnow()
        hooks = await _seed(pg_db, account, rng, now)
        params = _request(rng, hooks, now)
        postgres, sqlite = [
            await _claimed(pg_db, FORMS[f], params, account) for f in ("postgres", "sqlite")
        ]
        assert sqlite == postgres, f"scenario {seed}: {params}"
        claims, leases, _ = postgres
        assert sorted(c[0] for c in claims) == [lease[0] for lease in leases]
        claimed += len(claims)
        cut_short += len(claims) == params["limit"]
    # The scenarios exercise the claim, and the global limit too.
    assert claimed > SCENARIOS and cut_short > 5


# -- what a claim reads: never a webhook's whole backlog ---------------------------------------

BACKLOG = 2000


async def _backlog(
    db: Database, account_id: str, now: datetime, *, rate_limit: int | None, size: int = BACKLOG
) -> str:
    """One active webhook with ``size`` due, unleased deliveries (in pairs sharing a due
    time, so the claim's tie-break by id matters); returns its id."""
    hook = ids.webhook_id()
    event_rows, delivery_rows = [], []
    for n in range(size):
        event = ids.event_id()
        due = now - timedelta(seconds=size - n // 2)
        event_rows.append(
            {
                "id": event,
                "account_id": account_id,
                "type": "contact.created",
                "data": {"n": n},
                "created_at": due,
                "dispatched": True,
            }
        )
        delivery_rows.append(
            {
                "id": ids.delivery_id(),
                "account_id": account_id,
                "webhook_id": hook,
                "event_id": event,
                "event_type": "contact.created",
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": due,
                "created_at": now,
                "updated_at": now,
            }
        )
    async with db.begin() as conn:
        await conn.execute(
            insert(webhooks),
            {
                "id": hook,
                "account_id": account_id,
                "url": "http://127.0.0.1:9/backlog",
                "events": ["contact.created"],
                "is_active": True,
                "secret_enc": "sealed",
                "rate_limit": rate_limit,
                "consecutive_failures": 0,
                "created_at": now,
                "updated_at": now,
            },
        )
        await conn.execute(insert(events), event_rows)
        await conn.execute(insert(deliveries), delivery_rows)
    return hook


def _rows_read(plan: dict[str, Any], relation: str) -> int:
    """Rows the plan's scans of ``relation`` returned (EXPLAIN ANALYZE, all loops)."""
    read = 0
    if plan.get("Relation Name") == relation:
        read += int(plan["Actual Rows"]) * int(plan["Actual Loops"])
    return read + sum(_rows_read(child, relation) for child in plan.get("Plans", []))


def _sorts(plan: dict[str, Any]) -> list[int]:
    """The input sizes of the plan's Sort nodes."""
    own = [int(plan["Plans"][0]["Actual Rows"])] if plan["Node Type"] == "Sort" else []
    return own + [n for child in plan.get("Plans", []) for n in _sorts(child)]


def _claim_of_eight(now: datetime) -> dict[str, Any]:
    """A claim of up to 8 deliveries, nothing busy, saturated or circuit-held."""
    return sql.claim_params(
        worker=WORKER,
        now=now,
        until=now + HOLD,
        limit=8,
        per_endpoint=64,
        busy={},
        saturated=[],
        open_after=OPEN_AFTER,
        probe_room=1,
    )


async def _explained(db: Database, query: Any, params: Any) -> Any:
    """EXPLAIN ANALYZE of ``query`` on ``db``'s database, rolled back: the plan's root node."""
    sql_text, arguments = compiled_for(query, db.dialect, params).render(params)
    dsn = make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)
    raw = await asyncpg.connect(dsn)
    try:
        transaction = raw.transaction()
        await transaction.start()
        try:
            explained = await raw.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql_text}", *arguments)
        finally:
            await transaction.rollback()  # ANALYZE ran the claim's UPDATEs
    finally:
        await raw.close()
    return orjson.loads(explained)[0]["Plan"]


async def test_the_postgres_claim_reads_only_the_rows_it_takes(
    pg_db: Database,
) -> None:
    """The per-webhook due index is in the claim's order (next_attempt_at, id): a claim of 8
    from a 2,000-row backlog reads ~8 rows and sorts none of the backlog. Without ``id`` in the
    index, PostgreSQL read and sorted every due row of the webhook (and its claims grew slower
    with the backlog)."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    await _backlog(pg_db, account, now, rate_limit=None)
    params = _claim_of_eight(now)
    plan = await _explained(pg_db, sql.postgres_claim(params), params)
    assert _rows_read(plan, "deliveries") <= 4 * 8
    assert all(n <= 8 for n in _sorts(plan)), _sorts(plan)


async def test_the_postgres_claim_never_reads_another_webhooks_backlog(
    pg_db: Database,
) -> None:
    """Beside a hanging endpoint's backlog (saturated: skipped) and a failing one's (its circuit
    open, the probe ahead), the healthy webhook's claim reads its own rows only. With
    ``webhook_id = hook``, PostgreSQL walked the time-ordered due index and filtered on the
    webhook: every due row of the other two, three times a claim (docs/benchmarks.md)."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    hanging = await _backlog(pg_db, account, now, rate_limit=None)
    failing = await _backlog(pg_db, account, now, rate_limit=None)
    healthy = await _backlog(pg_db, account, now, rate_limit=None)
    async with pg_db.begin() as conn:
        await conn.execute(
            webhooks.update()
            .where(webhooks.c.id == failing)
            .values(consecutive_failures=OPEN_AFTER, next_probe_at=now + HOLD)
        )
        # Delivered, but for its three newest: it keeps up, the others fall behind.
        newest = (
            select(deliveries.c.id)
            .where(deliveries.c.webhook_id == healthy)
            .order_by(deliveries.c.next_attempt_at.desc())
            .limit(3)
        )
        await conn.execute(
            deliveries.update()
            .where(deliveries.c.webhook_id == healthy, deliveries.c.id.not_in(newest))
            .values(status="succeeded")
        )
    await _analyze(pg_db)
    params = {**_claim_of_eight(now), "per_endpoint": 8, "saturated": [hanging]}
    plan = await _explained(pg_db, sql.postgres_claim(params), params)
    async with pg_db.begin() as conn:
        claimed = await fetch_all(conn, sql.postgres_claim(params), params)
    assert {row.webhook_id for row in claimed} == {healthy} and len(claimed) == 3
    assert _rows_read(plan, "deliveries") <= 4 * 8


async def _analyze(db: Database) -> None:
    """Fresh planner statistics (the plans under test are the ones real ones lead to)."""
    dsn = make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)
    raw = await asyncpg.connect(dsn)
    try:
        await raw.execute("ANALYZE")
    finally:
        await raw.close()


async def test_the_look_for_rate_limited_work_never_reads_other_webhooks_deliveries(
    pg_db: Database,
) -> None:
    """Each claim round on PostgreSQL looks whether a rate-limited webhook has due work. With
    none rate limited it must not read a single delivery: as an EXISTS, PostgreSQL made it a
    semi-join over every due delivery (6 ms a round at 10,000 due rows)."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    await _backlog(pg_db, account, now, rate_limit=None)
    plan = await _explained(pg_db, sql.ANY_RATE_LIMITED_DUE, {"now": now})
    assert _rows_read(plan, "deliveries") == 0
    limited = await _backlog(pg_db, account, now, rate_limit=5)
    async with pg_db.read() as conn:
        found = await fetch_all(conn, sql.ANY_RATE_LIMITED_DUE, {"now": now})
    assert [row.id for row in found] == [limited]
    plan = await _explained(pg_db, sql.ANY_RATE_LIMITED_DUE, {"now": now})
    assert _rows_read(plan, "deliveries") == 1


async def test_the_sqlite_claim_sorts_no_backlog(tmp_path: Path) -> None:
    """SQLite's form reads each webhook's oldest rows in index order (no temporary B-tree for
    the ORDER BY), and still takes them oldest first, ties by id."""
    db = Database(make_settings(f"sqlite:///{tmp_path / 'claim.db'}"))
    await upgrade_to_head(db)
    try:
        account = (await new_account(db)).id
        now = utcnow()
        hook = await _backlog(db, account, now, rate_limit=None)
        due = sql.due_rows(1)
        params = {"now": now, "hook_0": hook, "limit_0": 8}
        sql_text, arguments = compiled_for(due, db.dialect, params).render(params)
        raw = sqlite3.connect(tmp_path / "claim.db")
        try:
            plan = " | ".join(
                str(row[-1]) for row in raw.execute(f"EXPLAIN QUERY PLAN {sql_text}", arguments)
            )
        finally:
            raw.close()
        assert "ix_deliveries_webhook_due" in plan and "TEMP B-TREE" not in plan, plan
        async with db.begin() as conn:
            taken = await SQLiteDeliveries().claim(
                conn,
                _claim_of_eight(now),
            )
            oldest = await conn.execute(
                select(deliveries.c.id)
                .order_by(deliveries.c.next_attempt_at, deliveries.c.id)
                .limit(8)
            )
        assert [row.id for row in taken] == [row.id for row in oldest]
    finally:
        await db.dispose()


# -- what a claim costs PostgreSQL besides its rows: its plans and its locks ------------------


async def _raw(db: Database) -> asyncpg.Connection:
    dsn = make_url(db.url).set(drivername="postgresql").render_as_string(hide_password=False)
    return await asyncpg.connect(dsn)


async def test_the_claim_and_the_look_run_cached_plans_whatever_the_rounds_limit(
    pg_db: Database,
) -> None:
    """PostgreSQL plans a prepared statement's first five runs for their values, then runs its
    generic plan if that costs no more. The claim is one text whatever the round's ``limit``
    (its free slots), and the look for rate-limited work writes its LIMITs into the text, so
    both run a cached plan from the sixth call on one connection. Before, the claim had one
    text per least(per_endpoint, limit), and the look's bound LIMIT made its generic plan cost
    twice its custom one: both were planned on nearly every call of a drain (~1 ms each;
    docs/benchmarks.md)."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    await _backlog(pg_db, account, now, rate_limit=None)
    await _analyze(pg_db)
    raw = await _raw(pg_db)
    try:
        for limit in range(1, 13):
            params = {**_claim_of_eight(now), "limit": limit, "per_endpoint": 8}
            claim, arguments = compiled_for(
                sql.postgres_claim(params), pg_db.dialect, params
            ).render(params)
            look, look_arguments = compiled_for(
                sql.ANY_RATE_LIMITED_DUE, pg_db.dialect, {"now": now}
            ).render({"now": now})
            transaction = raw.transaction()
            await transaction.start()
            try:
                assert len(await raw.fetch(claim, *arguments)) == min(limit, 8)
                assert await raw.fetch(look, *look_arguments) == []
            finally:
                await transaction.rollback()  # nothing leased: every round finds the same rows
        prepared = {
            row["statement"]: (row["generic_plans"], row["custom_plans"])
            for row in await raw.fetch(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            )
        }
    finally:
        await raw.close()
    claims = [plans for text, plans in prepared.items() if "FOR UPDATE SKIP LOCKED" in text]
    assert claims == [(7, 5)], prepared
    assert prepared[look] == (7, 5)


def _scans(plan: dict[str, Any], relation: str) -> list[str]:
    """The node types of the plan's scans of ``relation``."""
    own = [plan["Node Type"]] if plan.get("Relation Name") == relation else []
    return own + [t for child in plan.get("Plans", []) for t in _scans(child, relation)]


async def test_the_claims_cached_plan_reads_events_by_key_once_the_grown_tables_are_analyzed(
    pg_db: Database,
) -> None:
    """A young database's tables are analyzed at a few pages (``manager.
    analyze_young_tables``), and a pooled connection's cached generic plan of the dispatch
    round's claim, made then, read ``events`` whole, twice (the numbering's join and the
    claims' events): a pass over a few pages cost less than a probe by the key. The plan stays
    while the tables grow, so each round read all the events (1,099 rows, 82 pages, at the end
    of a window: docs/benchmarks.md, 152). Once the tables have grown by half, the next look
    analyzes them again, which re-makes the plan: it must then read ``events`` by its key.
    This fails when the look takes tables analyzed once for old (the look before), and when
    the numbering's generic plan counts ten ids (without its ``LIMIT cardinality``): at ten
    times the rows its join still read ``events`` whole."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    await _backlog(pg_db, account, now, rate_limit=None, size=60)
    assert await manager.analyze_young_tables(pg_db) is True  # never analyzed
    plans: list[str] = []
    raw = await _raw(pg_db)
    try:
        await raw.execute(
            "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; "
            "SET auto_explain.log_level = notice; SET auto_explain.log_format = json"
        )
        raw.add_log_listener(lambda _conn, message: plans.append(str(message)))

        async def claim() -> dict[str, Any]:
            params = {**_claim_of_eight(now), "per_endpoint": 8, "a_id": []}
            text, arguments = compiled_for(
                sql.postgres_claim(params, numbering=True), pg_db.dialect, params
            ).render(params)
            transaction = raw.transaction()
            await transaction.start()
            try:
                assert len(await raw.fetch(text, *arguments)) == 8
            finally:
                await transaction.rollback()  # nothing leased: every round finds the same rows
            logged = plans[-1]
            return dict(orjson.loads(logged[logged.index("{") :])["Plan"])

        young = [await claim() for _ in range(7)]  # 1-5: custom plans; 6: the generic one, kept
        assert "Seq Scan" in _scans(young[-1], "events")  # a few pages: one pass is cheapest
        # Ten times the rows: the events of a noisy window's middle (542-830 at its looks)
        await _backlog(pg_db, account, now, rate_limit=None, size=600)
        assert await manager.analyze_young_tables(pg_db) is True  # grown since analyzed
        grown = await claim()
        generic = await raw.fetchval(
            "SELECT generic_plans FROM pg_prepared_statements WHERE statement LIKE $1",
            "%WITH dispatched AS%",
        )
    finally:
        await raw.close()
    assert generic == 3  # runs 6, 7 and the one after the ANALYZE: the plan was re-made
    assert "Seq Scan" not in _scans(grown, "events"), _scans(grown, "events")


async def test_the_postgres_claim_locks_only_the_rows_it_leases(pg_db: Database) -> None:
    """With 5 of its 8 slots busy, a webhook's claim takes 3 rows and locks those 3: another
    worker's claim (SKIP LOCKED) finds every other due row free while the first one's
    transaction is open. Before, the claim locked least(per_endpoint, limit) of the webhook's
    oldest rows, 8, and leased 3: 5 rows another worker skipped until the statement ended."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    hook = await _backlog(pg_db, account, now, rate_limit=None)
    params = {**_claim_of_eight(now), "per_endpoint": 8, "busy_hooks": [hook], "busy_counts": [5]}
    raw = await _raw(pg_db)
    try:
        async with pg_db.begin() as conn:
            claimed = await fetch_all(conn, sql.postgres_claim(params), params)
            free = await raw.fetchval(
                "SELECT count(*) FROM (SELECT id FROM deliveries WHERE webhook_id = $1 "
                "AND status = 'pending' FOR UPDATE SKIP LOCKED) AS unlocked",
                hook,
            )
    finally:
        await raw.close()
    assert len(claimed) == 3
    assert free == BACKLOG - 3


async def test_a_claims_lease_is_written_beside_the_row_with_no_index_entry(
    pg_db: Database,
) -> None:
    """The lease sets only columns no index holds, so PostgreSQL writes it as a HOT update
    (no entry in any of the table's five indexes) when the row's page has room for the new
    version. Rows are inserted in batches that fill their pages; at ``deliveries``' fillfactor
    (50, migration 0008_lease_room) each page keeps half free, so every lease of a claim is
    HOT. At the default fillfactor (100) the oldest rows' page is full and the leases went to
    other pages, each with five index entries (~78% of a drain's: docs/benchmarks.md, 182)."""
    account = (await new_account(pg_db)).id
    now = utcnow()
    await _backlog(pg_db, account, now, rate_limit=None, size=500)
    params = _claim_of_eight(now)
    text, arguments = compiled_for(sql.postgres_claim(params), pg_db.dialect, params).render(params)
    raw = await _raw(pg_db)
    try:
        transaction = raw.transaction()
        await transaction.start()
        try:
            assert len(await raw.fetch(text, *arguments)) == 8
            # This transaction's own counts: exact, not the cumulative statistics (reported late).
            updated, hot = await raw.fetchrow(
                "SELECT pg_stat_get_xact_tuples_updated('deliveries'::regclass), "
                "pg_stat_get_xact_tuples_hot_updated('deliveries'::regclass)"
            )
        finally:
            await transaction.rollback()
    finally:
        await raw.close()
    assert (updated, hot) == (8, 8)
