"""``storage.queries.deliveries``: the claim's two forms take the same deliveries.

The claim is written twice (``CLAIM_ON_POSTGRES``, one statement; ``claim_on_sqlite``, four).
``tests/delivery/test_manager.py`` runs every claim test on both backends; here both forms run
on the same rows, on PostgreSQL (the SQLite form's statements are plain Core, so they run
there too), over random scenarios, and must lease the same deliveries and return the same
claims in the same order.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, insert, select

from hookline import ids
from hookline.storage.connector import Connection
from hookline.storage.db import Database, fetch_all
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import deliveries, events, webhooks
from hookline.storage.queries import deliveries as sql
from hookline.timeutil import utcnow
from tests.conftest import make_settings, new_account
from tests.support.postgres import PostgresServer

SCENARIOS = 60
OPEN_AFTER = 10
HOLD = timedelta(seconds=30)
WORKER = "w-claiming"

Form = Callable[[Connection, dict[str, Any]], Awaitable[list[Any]]]


async def _on_postgres(conn: Connection, params: dict[str, Any]) -> list[Any]:
    return await fetch_all(conn, sql.CLAIM_ON_POSTGRES, params)


FORMS: dict[str, Form] = {"postgres": _on_postgres, "sqlite": sql.claim_on_sqlite}


class _RollBack(Exception):
    pass


@pytest.fixture
async def pg_db(pg_server: PostgresServer) -> AsyncIterator[Database]:
    db = Database(make_settings(await pg_server.acreate_database()))
    await upgrade_to_head(db)
    try:
        yield db
    finally:
        await db.dispose()


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
        hook = ids.webhook_id()
        hook_rows.append(
            {
                "id": hook,
                "account_id": account_id,
                "url": f"http://127.0.0.1:9/{hook}",
                "events": ["contact.created"],
                "is_active": rng.random() < 0.85,
                "secret_enc": "sealed",
                "rate_limit": 5 if rng.random() < 0.1 else None,  # claimed elsewhere
                # The circuit: closed, open with its probe due, open with the probe ahead.
                "consecutive_failures": rng.choice([0, 0, 3, OPEN_AFTER, 40]),
                "next_probe_at": rng.choice([None, now - timedelta(seconds=5), now + HOLD]),
                "created_at": now,
                "updated_at": now,
            }
        )
        for _ in range(rng.randint(0, 8)):
            event = ids.event_id()
            event_rows.append(
                {
                    "id": event,
                    "account_id": account_id,
                    "type": "contact.created",
                    "data": {"n": len(event_rows)},
                    "created_at": now,
                    "dispatched": True,
                }
            )
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
    async with db.begin() as conn:
        await conn.execute(delete(webhooks).where(webhooks.c.account_id == account_id))
        await conn.execute(delete(events).where(events.c.account_id == account_id))
        await conn.execute(insert(webhooks), hook_rows)
        if delivery_rows:
            await conn.execute(insert(events), event_rows)
            await conn.execute(insert(deliveries), delivery_rows)
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


async def _claimed(
    db: Database, form: Form, params: dict[str, Any], account_id: str
) -> tuple[list[Any], Any, Any]:
    """What ``form`` returns and the leases and probe holds it leaves, then rolled back."""
    seen: tuple[list[Any], Any, Any] = ([], [], [])
    with pytest.raises(_RollBack):
        async with db.begin() as conn:
            claims = [tuple(row) for row in await form(conn, params)]
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
            raise _RollBack
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
