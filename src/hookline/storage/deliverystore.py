"""The delivery engine's storage, one implementation per backend, side by side.

``delivery.manager`` decides what to fan out, claim and record; it runs those steps through
``Database.deliveries``, a ``DeliveryStore``, and never asks which database it has. Where the
backends differ (the claim, the fan-out's writes, the outcome recorder, readying the statements,
the planner's statistics) each form is written once, here, beside its twin; both take the same
parameters and return the same rows (``tests/storage/queries/test_deliveries.py`` and
``test_outcomes.py`` hold the twins to the same scenarios).

* ``SQLiteDeliveries``: several statements run inline under the single writer
  (``BEGIN IMMEDIATE`` serializes the worker's transactions).
* ``PostgresDeliveries``: each step one statement over arrays, locking ``SKIP LOCKED`` where
  workers compete, in autocommit when one statement is the whole transaction.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from hookline.storage.connector import Connection
from hookline.storage.models import deliveries
from hookline.storage.queries import deliveries as q
from hookline.storage.queries import stats as stats_queries
from hookline.storage.queries import workers as worker_queries
from hookline.storage.statements import Params, Query

if TYPE_CHECKING:
    from hookline.storage.db import Database

log = logging.getLogger("hookline.delivery")


@dataclass(frozen=True, slots=True)
class DispatchLook:
    """What a dispatch round found: undispatched events, their accounts' active webhooks, and
    whether a rate-limited webhook has due work."""

    events: list[Any]
    webhooks: list[Any]
    """Rows with ``id``, ``account_id``, ``events``, ``filter`` and ``rate_limited``."""
    rate_limited_due: bool


@dataclass(frozen=True, slots=True)
class Outcomes:
    """A recorder batch: one tuple per attempt, in ``queries.deliveries.OUTCOME_NAMES`` order."""

    worker: str
    now: datetime
    values: Sequence[tuple[Any, ...]]
    rollup: Mapping[str, Any]
    """The counters' constants: ``spans``, ``any_status``, ``any_latency``."""


@dataclass(frozen=True, slots=True)
class Recorded:
    stored: list[int]
    """The batch positions (from 0) of the outcomes whose delivery still exists."""
    exhausted: list[Any]
    """The rows of the deliveries that just failed for good."""


class ClaimRound(Protocol):
    """The manager's side of a claim round; the store decides the transactions."""

    @property
    def limit(self) -> int: ...

    @property
    def rate_limited_first(self) -> bool:
        """Whether the last look found rate-limited due work (claimed first, then)."""
        ...

    async def look(self, db: Database) -> bool:
        """One read: whether a rate-limited webhook has due work (remembered)."""
        ...

    async def claim_rate_limited(self, conn: Connection) -> list[Any]: ...

    def rest(self, taken: Sequence[Any]) -> ClaimRound:
        """The round for the slots left once ``taken`` were claimed."""
        ...

    def params(self) -> Params:
        """The claim of webhooks without a rate limit (``queries.deliveries.claim_params``)."""
        ...

    def claims(self, rows: Sequence[Any]) -> list[Any]: ...


_DELIVERY_NAMES = tuple(column.name for column in deliveries.c)


class DeliveryStore:
    """The steps of the delivery engine whose statements differ by backend."""

    one_writer: bool
    """Every write transaction queues for one writer: a recorder batch delays the next round,
    and a second worker process on the database is usually a mistake."""

    async def look(self, conn: Connection, *, limit: int, now: datetime) -> DispatchLook:
        raise NotImplementedError

    async def insert(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """A dispatch's delivery ``rows`` (each supplies every column)."""
        raise NotImplementedError

    async def number_and_claim(
        self, conn: Connection, event_ids: Sequence[str], params: Params | None
    ) -> list[Any]:
        """After ``insert``: mark ``event_ids`` dispatched with the next stream numbers, in
        order, then, given ``params``, claim (``claim``)."""
        raise NotImplementedError

    async def claim(self, source: Database | Connection, params: Params) -> list[Any]:
        """Lease due deliveries of webhooks without a rate limit (``claim_params``) and return
        their claims, oldest due first."""
        raise NotImplementedError

    async def claim_round(self, db: Database, round_: ClaimRound) -> list[Any]:
        raise NotImplementedError

    async def load_claims(self, conn: Connection, delivery_ids: Sequence[str]) -> list[Any]:
        """The claims of leased deliveries, in due order."""
        raise NotImplementedError

    async def record(self, conn: Connection, outcomes: Outcomes) -> Recorded:
        """Store a batch in ``conn``'s transaction: every attempt of a delivery that still
        exists and its rollup counters, the next state of each delivery whose lease the worker
        still holds (a delivery twice in a batch moves by its first outcome), and the webhooks
        whose every attempt succeeded healed."""
        raise NotImplementedError

    async def record_succeeded(self, db: Database, outcomes: Outcomes) -> int:
        """``record`` of a batch whose every attempt succeeded, as a transaction of its own;
        how many were stored."""
        raise NotImplementedError

    async def ready(self, db: Database, *, per_endpoint: int, connections: int) -> None:
        """The worker's statements made ready before its first round."""
        raise NotImplementedError

    async def analyze_if_young(self, db: Database) -> bool:
        """Refresh the planner's statistics of young delivery tables; whether it did."""
        raise NotImplementedError


# -- SQLite ---------------------------------------------------------------------------------


class SQLiteDeliveries(DeliveryStore):
    """Several statements inline under the single writer."""

    one_writer = True
    ready_hooks = 4
    """The claims of up to this many webhooks with due work at once compiled by ``ready``."""

    async def look(self, conn: Connection, *, limit: int, now: datetime) -> DispatchLook:
        # The rate-limited claim is its own look here: inline, it costs one read.
        events = (await conn.execute(q.UNDISPATCHED, {"limit": limit})).all()
        if not events:
            return DispatchLook([], [], rate_limited_due=True)
        accounts = sorted({row.account_id for row in events})
        hooks = (await conn.execute(q.ACTIVE_WEBHOOKS, {"accounts": accounts})).all()
        return DispatchLook(events, hooks, rate_limited_due=True)

    async def insert(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            await conn.execute_many(q.INSERT_DELIVERY, list(rows))

    async def number_and_claim(
        self, conn: Connection, event_ids: Sequence[str], params: Params | None
    ) -> list[Any]:
        if event_ids:
            last = int((await conn.execute(q.LAST_STREAM_SEQ)).one().last)
            numbered = [{"b_id": i, "b_seq": last + n} for n, i in enumerate(event_ids, 1)]
            await conn.execute_many(q.DISPATCHED_AS, numbered)
        return [] if params is None else await self.claim(conn, params)

    async def claim(self, source: Database | Connection, params: Params) -> list[Any]:
        """The claim's steps, one statement each: the webhooks with due work, each one's oldest
        claimable rows up to its free slots (read as claims: the single writer holds them until
        the COMMIT), and the oldest ``limit`` of those leased."""
        assert isinstance(source, Connection), "a claim runs in the writer's transaction"
        conn = source
        now, limit, saturated = params["now"], params["limit"], params["saturated"]
        probe: dict[str, Any] = {"now": now, "limit": limit, "open_after": params["open_after"]}
        if saturated:
            probe["saturated"] = saturated
        hooks = (await conn.execute(q.HOOKS_WITH_DUE_WORK[bool(saturated)], probe)).all()
        if not hooks:
            return []
        busy = dict(zip(params["busy_hooks"], params["busy_counts"], strict=True))
        due: dict[str, Any] = {"now": now}
        for i, hook in enumerate(hooks):
            slots = params["probe_room"] if hook.circuit_open else params["per_endpoint"]
            due[f"hook_{i}"] = hook.id
            # No more than the round takes: every row read is a claim read.
            due[f"limit_{i}"] = max(0, min(limit, slots - busy.get(hook.id, 0)))
        rows = (await conn.execute(q.due_rows(len(hooks)), due)).all()
        claims = sorted(rows, key=lambda row: (row.next_attempt_at, row.id))[:limit]
        if not claims:
            return []
        picked = [claim.id for claim in claims]
        until = params["until"]
        lease = {"ids": picked, "b_worker": params["worker"], "b_until": until, "now": now}
        await conn.execute(q.LEASE, lease)
        probing = {hook.id for hook in hooks if hook.circuit_open}
        probed = sorted(probing.intersection(claim.webhook_id for claim in claims))
        if probed:
            await conn.execute(q.HOLD_PROBES, {"ids": probed, "b_until": until})
        return claims

    async def claim_round(self, db: Database, round_: ClaimRound) -> list[Any]:
        """One transaction: rate-limited webhooks first, then the others."""
        async with db.begin() as conn:
            limited = await round_.claim_rate_limited(conn)
            rest = round_.rest(limited)
            if rest.limit <= 0:
                return limited
            return limited + rest.claims(await self.claim(conn, rest.params()))

    async def load_claims(self, conn: Connection, delivery_ids: Sequence[str]) -> list[Any]:
        return (await conn.execute(q.CLAIMS_AS_STORED, {"ids": list(delivery_ids)})).all()

    async def record(self, conn: Connection, outcomes: Outcomes) -> Recorded:
        """The recorder's steps, a statement each."""
        batch = [dict(zip(q.OUTCOME_NAMES, values, strict=True)) for values in outcomes.values]
        wanted = [o["delivery_id"] for o in batch]
        states = (await conn.execute(q.DELIVERY_STATES, {"ids": wanted})).all()
        current = {row.id: (row.leased_by, row.status) for row in states}
        stored = [n for n, o in enumerate(batch) if o["delivery_id"] in current]
        if not stored:
            return Recorded([], [])
        existing = [batch[n] for n in stored]
        attempts = [{name: o[name] for name in q.OUTCOME_ATTEMPT_NAMES} for o in existing]
        await conn.execute_many(q.INSERT_ATTEMPT, attempts)
        await conn.execute_many(stats_queries.ADD_TO_ROLLUPS, _rollup_rows(existing, outcomes))
        mine = (outcomes.worker, "pending")
        owned = [o for o in existing if current[o["delivery_id"]] == mine]
        # One UPDATE per row, each only while this worker holds the lease: a delivery twice in a
        # batch moves by its first outcome (the second finds the lease released).
        await conn.execute_many(q.TRANSITION, [_transition(o, outcomes) for o in owned])
        failed = sorted({o["delivery_id"] for o in owned if o["status"] == "failed"})
        exhausted = (await conn.execute(q.EXHAUSTED, {"ids": failed})).all() if failed else []
        failing = {o["webhook_id"] for o in existing if not o["succeeded"]}
        healthy = sorted({o["webhook_id"] for o in existing} - failing)
        if healthy:
            await conn.execute(q.HEAL, {"ids": healthy})
        return Recorded(stored, exhausted)

    async def record_succeeded(self, db: Database, outcomes: Outcomes) -> int:
        async with db.begin() as conn:
            return len((await self.record(conn, outcomes)).stored)

    async def ready(self, db: Database, *, per_endpoint: int, connections: int) -> None:
        """Compiled in process: each statement is otherwise compiled on its first run, on the
        path of a fresh server's first events."""
        for statement in (
            *q.sqlite_worker_statements(self.ready_hooks),
            stats_queries.ADD_TO_ROLLUPS,
        ):
            statement.compiled(db.dialect)

    async def analyze_if_young(self, db: Database) -> bool:
        return False  # SQLite's planner keeps no cached plans to refresh


def _transition(outcome: Mapping[str, Any], outcomes: Outcomes) -> dict[str, Any]:
    return {
        "b_worker": outcomes.worker,
        "b_now": outcomes.now,
        "b_id": outcome["delivery_id"],
        "b_status": outcome["status"],
        "b_next": outcome["next_attempt_at"],
        "b_code": outcome["status_code"],
        "b_error": outcome["error"],
    }


def _rollup_rows(batch: Sequence[Mapping[str, Any]], outcomes: Outcomes) -> list[dict[str, Any]]:
    facts = ((o["webhook_id"], o["second"], o["rollup_status"], o["latency_bin"]) for o in batch)
    return stats_queries.rollup_rows(
        facts,
        spans=outcomes.rollup["spans"],
        any_status=outcomes.rollup["any_status"],
        any_latency=outcomes.rollup["any_latency"],
    )


# -- PostgreSQL -----------------------------------------------------------------------------


class PostgresDeliveries(DeliveryStore):
    """Each step one statement over arrays; workers compete through ``SKIP LOCKED``."""

    one_writer = False

    async def look(self, conn: Connection, *, limit: int, now: datetime) -> DispatchLook:
        """One statement: the events, their accounts' webhooks and the look for rate-limited
        work."""
        found = (await conn.execute(q.DISPATCH_LOOK, {"limit": limit, "now": now})).all()
        return DispatchLook(
            [row for row in found if row.kind == q.DISPATCH_EVENT],
            [row for row in found if row.kind == q.DISPATCH_WEBHOOK],
            any(row.kind == q.DISPATCH_RATE_LIMITED_DUE for row in found),
        )

    async def insert(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """The rows and the stream's lock in one statement (or the lock alone): the numbering
        must be a later statement of the transaction, whose snapshot sees every number
        committed before."""
        if rows:
            await conn.execute(q.INSERT_DELIVERIES, q.as_arrays(rows, _DELIVERY_NAMES))
        else:
            await conn.execute(q.STREAM_LOCK)

    async def number_and_claim(
        self, conn: Connection, event_ids: Sequence[str], params: Params | None
    ) -> list[Any]:
        """One statement: the numbering as a CTE in front of the claim."""
        if params is None:
            if event_ids:
                await conn.execute(q.NUMBER_EVENTS, {"a_id": list(event_ids)})
            return []
        if not event_ids:
            return await self.claim(conn, params)
        numbered = {**params, "a_id": list(event_ids)}
        return (await conn.execute(q.postgres_claim(params, numbering=True), numbered)).all()

    async def claim(self, source: Database | Connection, params: Params) -> list[Any]:
        """One statement; given the ``Database``, in autocommit."""
        statement = q.postgres_claim(params)
        if isinstance(source, Connection):
            return (await source.execute(statement, params)).all()
        return await source.fetch_all(statement, params)

    async def claim_round(self, db: Database, round_: ClaimRound) -> list[Any]:
        """Rate-limited webhooks first while the last look found some with due work; otherwise
        the look runs concurrently with the claim of the others, and what it finds is claimed
        with the slots left over (and first from the next round on)."""
        if round_.rate_limited_first:
            limited = await _claim_rate_limited(db, round_)
            rest = round_.rest(limited)
            if rest.limit <= 0:
                return limited
            return limited + rest.claims(await self.claim(db, rest.params()))
        # The look in a task of its own, the claim in the caller's: each task between the
        # caller and a result is a turn of the event loop to wait for.
        look = asyncio.create_task(round_.look(db))
        try:
            claimed = round_.claims(await self.claim(db, round_.params()))
        except BaseException as exc:
            if not isinstance(exc, Exception):
                look.cancel()  # the round is cancelled (a stopping worker): so is its look
            await asyncio.gather(look, return_exceptions=True)
            raise
        try:
            looked = await look
        except Exception:
            return claimed  # the claims stand; the next round looks first (the memo says so)
        rest = round_.rest(claimed)
        if not looked or rest.limit <= 0:
            return claimed
        try:
            async with db.begin() as conn:
                return claimed + await rest.claim_rate_limited(conn)
        except Exception:
            log.warning("claiming rate-limited deliveries failed", exc_info=True)
            return claimed  # taken already: send them; the rate-limited ones wait a round

    async def load_claims(self, conn: Connection, delivery_ids: Sequence[str]) -> list[Any]:
        return (await conn.execute(q.CLAIMS, {"ids": list(delivery_ids)})).all()

    async def record(self, conn: Connection, outcomes: Outcomes) -> Recorded:
        rows = (await conn.execute(q.RECORD, _record_params(outcomes))).all()
        failed = {row.id: row for row in rows if row.id is not None}  # once, if given twice
        return Recorded([row.n - 1 for row in rows], list(failed.values()))

    async def record_succeeded(self, db: Database, outcomes: Outcomes) -> int:
        """The one statement is the whole transaction: autocommit, one round trip."""
        return len(await db.fetch_all(q.RECORD, _record_params(outcomes)))

    async def ready(self, db: Database, *, per_endpoint: int, connections: int) -> None:
        """``connections`` pooled connections opened and the worker's statements parsed on
        each, which a fresh process's first events otherwise waited for."""
        params = {"per_endpoint": per_endpoint}
        statements: tuple[Query, ...] = (
            q.DISPATCH_LOOK,
            q.INSERT_DELIVERIES,
            q.postgres_claim(params, numbering=True),
            q.postgres_claim(params),
            q.RECORD,
            q.NEXT_WAKES,
            q.RATE_LIMITED_WAITING,
            worker_queries.NOTIFY,
        )
        await db.ready(statements, of="the delivery worker", connections=connections)

    async def analyze_if_young(self, db: Database) -> bool:
        """``ANALYZE`` the delivery tables if PostgreSQL never has, or if one has half as many
        pages again as when it last did. Each pooled connection runs the worker's statements by
        a cached generic plan, re-made only when the statistics change: one made on a table of
        a few pages walks whole tables once they have grown."""
        async with db.read() as conn:  # the look and the ANALYZE on one pooled connection
            if not (await conn.execute(q.YOUNG_TABLES)).all():
                return False
            await conn.execute(q.ANALYZE)
        return True


async def _claim_rate_limited(db: Database, round_: ClaimRound) -> list[Any]:
    """One look in autocommit, and only then the locking claim in a transaction of its own."""
    if not await round_.look(db):
        return []
    async with db.begin() as conn:
        return await round_.claim_rate_limited(conn)


def _record_params(outcomes: Outcomes) -> dict[str, Any]:
    return q.outcome_arrays(
        outcomes.values, worker=outcomes.worker, now=outcomes.now, rollup=outcomes.rollup
    )
