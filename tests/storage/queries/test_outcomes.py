"""``storage.queries.deliveries``: the recorder's two forms store the same outcomes.

Like the claim, the recorder's storing is written twice (``PostgresDeliveries.record``, one
statement; ``SQLiteDeliveries.record``, six). ``tests/delivery/test_manager.py`` runs the recorder's
tests on both backends; here both forms run on the same rows, on PostgreSQL (the SQLite form's
statements are plain Core, so they run there too), over random batches: deliveries leased to
this worker, to another, cancelled under its lease or deleted, given once or twice, succeeded,
retried or failed for good, across a minute's boundary, onto counters that already exist. Both
must leave the same deliveries, attempts, counters and webhooks, and report the same stored
outcomes and the same deliveries exhausted.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from sqlalchemy import select, text

from hookline import ids
from hookline.delivery import manager, stats
from hookline.delivery.manager import AttemptRecord
from hookline.delivery.retry import ConnectFailed, Decision
from hookline.delivery.sender import AttemptResult
from hookline.storage.connector import Connection, PostgresConnector
from hookline.storage.db import Database
from hookline.storage.deliverystore import (
    DeliveryStore,
    Outcomes,
    PostgresDeliveries,
    SQLiteDeliveries,
)
from hookline.storage.models import attempt_rollups, deliveries, delivery_attempts, webhooks
from hookline.storage.queries import deliveries as sql
from hookline.timeutil import utcnow
from tests.conftest import new_account
from tests.storage.queries.scenarios import RollBack, event_row, replace_rows, webhook_row
from tests.support.waiting import eventually

SCENARIOS = 40
WORKER = "w-recording"
MINUTE = datetime(2026, 11, 23, 22, 59, 59, tzinfo=UTC)


async def _seed(db: Database, account_id: str, rng: random.Random, now: datetime) -> list[Any]:
    """Webhooks in every health, their deliveries in every state a recorder meets; returns
    (delivery id, webhook id) of each delivery, and of a few that no longer exist."""
    hook_rows, event_rows, delivery_rows = [], [], []
    for _ in range(rng.randint(1, 4)):
        health = {
            "failing_since": rng.choice([None, now - timedelta(minutes=5)]),
            "consecutive_failures": rng.choice([0, 3, 12]),
            "next_probe_at": rng.choice([None, now + timedelta(seconds=30)]),
        }
        hook_rows.append(webhook_row(account_id, now, is_active=True, **health))
        hook = hook_rows[-1]["id"]
        for _ in range(rng.randint(1, 6)):
            kind = rng.choice(["contact.created"] * 4 + ["delivery.exhausted"])
            event_rows.append(event_row(account_id, now, kind, {}))
            status, holder = rng.choice(
                [("pending", WORKER)] * 4
                + [("pending", "another-worker"), ("cancelled", WORKER), ("succeeded", None)]
            )
            delivery_rows.append(
                {
                    "id": ids.delivery_id(),
                    "account_id": account_id,
                    "webhook_id": hook,
                    "event_id": event_rows[-1]["id"],
                    "event_type": event_rows[-1]["type"],
                    "status": status,
                    "attempts": rng.randint(0, 3),
                    "next_attempt_at": now if status == "pending" else None,
                    "leased_by": holder,
                    "leased_until": now + timedelta(seconds=30) if holder else None,
                    "created_at": now,
                    "updated_at": now,
                }
            )
    await replace_rows(db, account_id, hook_rows, event_rows, delivery_rows)
    async with db.begin() as conn:  # counters that the batch adds to (ON CONFLICT)
        facts = [stats.AttemptFacts(str(h["id"]), MINUTE, 204, 3) for h in hook_rows]
        await stats.add_to_rollups(conn, facts)
    targets = [(str(row["id"]), str(row["webhook_id"])) for row in delivery_rows]
    gone = [(ids.delivery_id(), str(hook_rows[0]["id"])) for _ in range(rng.randint(0, 2))]
    return targets + gone


def _batch(rng: random.Random, targets: list[Any], now: datetime) -> list[AttemptRecord]:
    chosen = rng.sample(targets, rng.randint(1, len(targets)))
    chosen += rng.sample(chosen, rng.randint(0, min(2, len(chosen))))  # given twice
    batch = []
    for delivery_id, hook in chosen:
        status, decision = rng.choice(
            [
                (204, Decision("succeeded")),
                (200, Decision("succeeded")),
                (500, Decision("pending", delay=60)),
                (None, Decision("pending", delay=5)),
                (500, Decision("failed")),
                (410, Decision("failed", disable_webhook=True)),
            ]
        )
        started = MINUTE + timedelta(milliseconds=rng.randint(0, 1500))
        error = ConnectFailed("refused") if status is None else None
        result = AttemptResult(
            started_at=started,
            duration_ms=rng.choice([0, 3, 31, 32, 250, 15000]),
            status_code=status,
            error=error,
            response_body=None if status is None else "ok",
        )
        later = now + timedelta(seconds=decision.delay) if decision.delay else None
        batch.append(AttemptRecord(delivery_id, hook, result, decision, later, "00-trace"))
    return batch


def _form(store: DeliveryStore) -> Any:
    """``store``'s recorder: the delivery ids it reports stored, and the rows of those
    exhausted."""

    async def record(conn: Connection, batch: list[AttemptRecord], now: datetime) -> Any:
        values = [manager._outcome_values(r) for r in batch]
        recorded = await store.record(conn, Outcomes(WORKER, now, values, manager._ROLLUP))
        exhausted = [
            tuple(v for k, v in row._mapping.items() if k != "n") for row in recorded.exhausted
        ]
        return [batch[n].delivery_id for n in recorded.stored], sorted(exhausted)

    return record


_on_postgres = _form(PostgresDeliveries())
_on_sqlite = _form(SQLiteDeliveries())


async def _stored(
    db: Database, form: Any, batch: list[AttemptRecord], account: str, now: datetime
) -> Any:
    """What ``form`` reports and the rows it leaves, then rolled back."""
    seen: Any = None
    a = delivery_attempts.c
    with pytest.raises(RollBack):
        async with db.begin() as conn:
            reported = await form(conn, batch, now)
            tables = []
            for query in (
                select(deliveries).where(deliveries.c.account_id == account).order_by("id"),
                select(a.delivery_id, a.webhook_id, a.started_at, a.duration_ms, a.status_code)
                .add_columns(a.error, a.response_body, a.succeeded)
                .order_by(a.id),
                select(attempt_rollups).order_by(*attempt_rollups.primary_key.columns),
                select(webhooks.c.id, webhooks.c.failing_since, webhooks.c.consecutive_failures)
                .add_columns(webhooks.c.next_probe_at, webhooks.c.is_active)
                .where(webhooks.c.account_id == account)
                .order_by(webhooks.c.id),
            ):
                tables.append([tuple(row) for row in await conn.execute(query)])
            seen = (reported, tables)
            raise RollBack
    return seen


async def test_both_forms_of_the_recorder_store_the_same_outcomes(pg_db: Database) -> None:
    account = (await new_account(pg_db)).id
    refused = exhausted = 0
    for seed in range(SCENARIOS):
        rng = random.Random(seed)
        targets = await _seed(pg_db, account, rng, utcnow())
        now = utcnow()
        batch = _batch(rng, targets, now)
        postgres = await _stored(pg_db, _on_postgres, batch, account, now)
        sqlite = await _stored(pg_db, _on_sqlite, batch, account, now)
        assert sqlite == postgres, f"scenario {seed}"
        (stored, failed), _ = postgres
        refused += len(batch) - len(stored)
        exhausted += len(failed)
    # The scenarios exercise refusals and alerts.
    assert refused > SCENARIOS / 4 and exhausted > SCENARIOS / 4


async def _one_leased_delivery(db: Database) -> tuple[datetime, dict[str, Any], dict[str, Any]]:
    """A fresh account's webhook, event and one delivery of it leased by ``WORKER``: the time
    they were made at, the webhook's row and the delivery's."""
    account = (await new_account(db)).id
    now = utcnow()
    hook = webhook_row(account, now, is_active=True)
    event = event_row(account, now, "contact.created", {})
    first = {
        "id": ids.delivery_id(),
        "account_id": account,
        "webhook_id": hook["id"],
        "event_id": event["id"],
        "event_type": event["type"],
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "leased_by": WORKER,
        "leased_until": now + timedelta(seconds=30),
        "created_at": now,
        "updated_at": now,
    }
    await replace_rows(db, account, [hook], [event], [first])
    return now, hook, first


async def test_a_pooled_connection_plans_the_recorder_for_the_table_as_it_has_grown(
    pg_db: Database,
) -> None:
    """A worker's first batch meets an almost empty ``deliveries``; a drain then fills it. The
    pooled connection that recorded that first batch must plan the later ones for the table as
    it is: its ``locked`` rows through ``pk_deliveries``, not by reading the whole table.
    PostgreSQL's default plan cache does (five custom plans, then a generic one made from the
    sixth call). ``plan_cache_mode = force_generic_plan`` on the pool's connections, tried for
    the worker (docs/benchmarks.md, 89), made the generic plan at the first call and kept its
    Seq Scan of deliveries for every batch of the drain: this fails with it."""
    now, hook, first = await _one_leased_delivery(pg_db)
    plans: list[str] = []
    connector = pg_db.connector
    assert isinstance(connector, PostgresConnector)
    async with connector.connection() as raw:  # the pool's one connection, kept idle after
        await raw.execute(
            "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; "
            "SET auto_explain.log_level = notice"
        )
        raw.add_log_listener(lambda _conn, message: plans.append(str(message)))
        used = await raw.fetchval("SELECT pg_backend_pid()")

    async def record(delivery_ids: list[str]) -> None:
        batch = [
            AttemptRecord(
                delivery_id,
                str(hook["id"]),
                AttemptResult(started_at=now, duration_ms=3, status_code=204),
                Decision("succeeded"),
                None,
            )
            for delivery_id in delivery_ids
        ]
        summary = await manager.record_outcomes(
            pg_db, WORKER, batch, now=now, disable_after=timedelta(days=3)
        )
        assert summary.recorded == len(delivery_ids)

    await record([str(first["id"])])
    async with connector.connection() as raw:  # a drain's fan-out: 5,000 more rows
        grown = await raw.fetch(
            "INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, status,"
            " attempts, next_attempt_at, leased_by, leased_until, created_at, updated_at)"
            " SELECT $1 || g, account_id, webhook_id, event_id, event_type, status, attempts,"
            " next_attempt_at, leased_by, leased_until, created_at, updated_at"
            " FROM deliveries, generate_series(1, 5000) AS g WHERE id = $2 RETURNING id",
            f"{first['id']}-",
            first["id"],
        )
    for start in range(0, 6 * 16, 16):  # batches 2-7: custom plans, then the generic one
        await record([row["id"] for row in grown[start : start + 16]])
    async with connector.connection() as raw:
        assert await raw.fetchval("SELECT pg_backend_pid()") == used  # one connection all along
    recorded = [plan for plan in plans if "INSERT INTO delivery_attempts" in plan]
    assert len(recorded) == 7, plans
    assert "Seq Scan on deliveries" in recorded[0]  # right for a table of one row
    whole = [n for n, plan in enumerate(recorded[1:], 2) if "Seq Scan on deliveries" in plan]
    assert whole == [], f"batches {whole} read the whole table"


def _node_types(plan: dict[str, Any]) -> list[str]:
    """The node types of ``plan`` and every node below it."""
    return [plan["Node Type"], *(t for child in plan.get("Plans", []) for t in _node_types(child))]


async def test_the_recorders_cached_plan_locks_deliveries_by_their_key_however_young_the_table(
    pg_db: Database,
) -> None:
    """A young database's ``deliveries`` is analyzed at a few hundred rows
    (``manager.analyze_young_tables``), and each pooled connection then runs the recorder by a
    generic plan made at its sixth batch, for the rest of the window while the table grows.
    Its ``locked`` rows must be read by ``pk_deliveries`` in that plan, and a generic plan
    must be made at all for the small batches of a light load. With ``id =
    ANY(:a_delivery_id)`` PostgreSQL planned a sequential scan at 300 rows (ten probes of an
    array of unknown length against one pass over ten pages), which read the whole table at
    every batch as it grew (docs/benchmarks.md, 129): this fails with it. With the LATERAL
    probes costed at ten ids (no ``LIMIT cardinality(..)``), batches of two were planned
    afresh at every run, never by a generic plan: this fails with that too."""
    now, hook, first = await _one_leased_delivery(pg_db)
    plans: list[str] = []
    connector = pg_db.connector
    assert isinstance(connector, PostgresConnector)
    async with connector.connection() as raw:  # the pool's one connection, kept idle after
        young = await raw.fetch(  # a young table: 300 rows, analyzed
            "INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, status,"
            " attempts, next_attempt_at, leased_by, leased_until, created_at, updated_at)"
            " SELECT $1 || g, account_id, webhook_id, event_id, event_type, status, attempts,"
            " next_attempt_at, leased_by, leased_until, created_at, updated_at"
            " FROM deliveries, generate_series(1, 299) AS g WHERE id = $2 RETURNING id",
            f"{first['id']}-",
            first["id"],
        )
        await raw.execute("ANALYZE deliveries")
        await raw.execute(
            "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; "
            "SET auto_explain.log_level = notice; SET auto_explain.log_format = json"
        )
        raw.add_log_listener(lambda _conn, message: plans.append(str(message)))
        used = await raw.fetchval("SELECT pg_backend_pid()")

    for start in range(0, 7 * 2, 2):  # batches 1-5: custom plans; 6: the generic one, kept
        batch = [
            AttemptRecord(
                row["id"],
                str(hook["id"]),
                AttemptResult(started_at=now, duration_ms=3, status_code=204),
                Decision("succeeded"),
                None,
            )
            for row in young[start : start + 2]
        ]
        summary = await manager.record_outcomes(
            pg_db, WORKER, batch, now=now, disable_after=timedelta(days=3)
        )
        assert summary.recorded == len(batch)
    recorded = [plan for plan in plans if "WITH outcome AS" in plan]  # the batches' plans
    async with connector.connection() as raw:
        assert await raw.fetchval("SELECT pg_backend_pid()") == used  # one connection all along
        generic = await raw.fetchval(
            "SELECT generic_plans FROM pg_prepared_statements WHERE statement = $1",
            sql.RECORD.compiled(pg_db.dialect).sql,
        )
    assert generic == 2  # batches 6 and 7
    assert len(recorded) == 7, plans
    for n, logged in enumerate(recorded, 1):
        explained = orjson.loads(logged[logged.index("{") :])
        locked = [
            node
            for node in explained["Plan"].get("Plans", [])
            if node.get("Subplan Name") == "CTE locked"
        ]
        assert len(locked) == 1, explained
        assert "Seq Scan" not in _node_types(locked[0]), f"batch {n}: {locked[0]}"
        assert "Index Scan" in _node_types(locked[0]), f"batch {n}: {locked[0]}"


def _retry_of(delivery: dict[str, Any], hook: dict[str, Any], now: datetime) -> AttemptRecord:
    """A failed attempt of ``delivery``, tried again in a minute: a batch whose storing reads
    and writes the webhook's health in its transaction after the statement."""
    result = AttemptResult(started_at=now, duration_ms=3, status_code=500)
    later = now + timedelta(seconds=60)
    return AttemptRecord(str(delivery["id"]), str(hook["id"]), result, Decision("pending"), later)


async def _waiting_for_a_lock(db: Database) -> bool:
    async with db.read() as conn:
        return bool(await conn.scalar(text("SELECT count(*) FROM pg_locks WHERE NOT granted")))


async def test_a_recording_holds_its_webhooks_before_any_delivery_or_counter(
    pg_db: Database,
) -> None:
    """The lock order (``storage.queries.deliveries``): webhooks, then deliveries, then the
    counters. A recording that waits for its webhook's row holds no delivery or counter yet,
    so whoever holds the webhook (another recorder, a PATCH) can take them. The recorder
    took them the other way round (deliveries and counters in its statement, then the
    webhook's health), and two workers recording a flaky endpoint's outcomes deadlocked:
    this fails with that order."""
    now, hook, first = await _one_leased_delivery(pg_db)
    async with pg_db.begin() as conn:  # the counters the recording adds to
        await stats.add_to_rollups(conn, [stats.AttemptFacts(str(hook["id"]), now, 500, 3)])
    connector = pg_db.connector
    assert isinstance(connector, PostgresConnector)
    async with connector.connection() as holder:
        holding = holder.transaction()
        await holding.start()
        await holder.execute("SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE", hook["id"])
        recording = asyncio.create_task(
            manager.record_outcomes(
                pg_db, WORKER, [_retry_of(first, hook, now)], now=now, disable_after=timedelta(1)
            )
        )
        await eventually(lambda: _waiting_for_a_lock(pg_db), what="the recording waits")
        async with connector.connection() as other:
            async with other.transaction():
                free = "SELECT 1 FROM {} WHERE {} = $1 FOR UPDATE NOWAIT"
                assert await other.fetch(free.format("deliveries", "id"), first["id"])
                assert await other.fetch(free.format("attempt_rollups", "webhook_id"), hook["id"])
        await holding.rollback()
    assert (await recording).recorded == 1


async def test_a_recording_rolled_back_to_break_a_deadlock_is_stored_again(
    pg_db: Database,
) -> None:
    """A batch PostgreSQL picks as a deadlock's victim is stored again, not given up (the
    worker would send its outcomes again): this fails without the retry."""
    now, hook, first = await _one_leased_delivery(pg_db)
    connector = pg_db.connector
    assert isinstance(connector, PostgresConnector)
    async with connector.connection() as other:
        await other.execute("SET deadlock_timeout = '60s'")  # the recording is the victim
        async with other.transaction():
            await other.execute("SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE", first["id"])
            recording = asyncio.create_task(
                manager.record_outcomes(
                    pg_db,
                    WORKER,
                    [_retry_of(first, hook, now)],
                    now=now,
                    disable_after=timedelta(1),
                )
            )
            await eventually(lambda: _waiting_for_a_lock(pg_db), what="the recording waits")
            # The recording holds the webhook and waits for the delivery: a cycle.
            await other.execute("SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE", hook["id"])
        await other.execute("RESET deadlock_timeout")
    assert (await recording).recorded == 1
    async with pg_db.read() as conn:
        stored = select(delivery_attempts.c.id).where(
            delivery_attempts.c.delivery_id == first["id"]
        )
        assert len((await conn.execute(stored)).all()) == 1
