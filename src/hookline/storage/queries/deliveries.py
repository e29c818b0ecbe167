"""Every statement of the delivery engine: fan-out, the claim, outcomes, leases, the deliveries
API, retention and recovery. ``delivery.manager`` (the worker's engine) and, on the request
side, ``domain.deliveries``, ``domain.recovery`` and ``domain.queue`` decide what to run and
with which values; the SQL is here, and only here.

Statements are built once, at import, with named bind parameters, never per call: building a
Core statement costs more than running it (150-450 µs each on the benchmark machine, several
per claim cycle; docs/benchmarks.md). Each is a ``Query``, compiled once per dialect
(``storage.statements``); one whose shape varies is a ``QueryShapes`` or a builder cached per
shape. A list is one parameter (``storage.lists``), so a statement's SQL is the same for any
length and the drivers reuse its prepared form. Row locks are written once, for PostgreSQL:
SQLite's compiler drops ``FOR UPDATE``, and its single writer (``BEGIN IMMEDIATE``) already
serializes the worker's transactions.

Lock order, on PostgreSQL: a transaction that may wait for row locks takes webhook rows first
(in id order), then delivery rows (in id order), then the rollup counters (in their key
order), as a webhook's PATCH or DELETE does (the row, then its deliveries). The recorder holds
its batch's webhooks before anything else for that (``RECORD_ON_POSTGRES``' ``hooks``). A
statement that takes them another way never waits: the claims lock ``SKIP LOCKED``.

The claim is the one statement written twice, side by side below: ``claim_on_postgres`` (one
statement, ``SKIP LOCKED``) and ``claim_on_sqlite`` (the same steps as three statements, run
inline under the single writer). Both take ``claim_params(...)`` and return the same rows;
``tests/delivery/test_manager.py`` runs every claim test on both backends.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    CompoundSelect,
    Integer,
    Select,
    String,
    Text,
    TypeDecorator,
    and_,
    bindparam,
    cast,
    delete,
    false,
    func,
    insert,
    literal_column,
    null,
    or_,
    select,
    text,
    true,
    type_coerce,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql

from hookline.storage.connector import Connection
from hookline.storage.db import Database, fetch_all
from hookline.storage.lists import StringList, in_list, not_in_list
from hookline.storage.models import deliveries as dlv
from hookline.storage.models import delivery_attempts, events, webhooks
from hookline.storage.statements import Params, Query, QueryShapes

# SQLite and PostgreSQL only use the partial indexes (ix_deliveries_due, ix_events_undispatched)
# when the query repeats their predicate as a constant, not as a bound parameter.
IS_PENDING = dlv.c.status == literal_column("'pending'")
IS_UNDISPATCHED = events.c.dispatched == false()
_NOW = bindparam("now", type_=dlv.c.next_attempt_at.type)
# A delivery as the deliveries API shows it (``delivery.payloads.delivery_out``).
_DELIVERY_COLUMNS = (
    dlv.c.id,
    dlv.c.webhook_id,
    dlv.c.event_id,
    dlv.c.event_type,
    dlv.c.status,
    dlv.c.attempts,
    dlv.c.last_status_code,
    dlv.c.last_error,
    dlv.c.next_attempt_at,
    dlv.c.created_at,
    dlv.c.updated_at,
)


# -- dispatch: events -> deliveries ----------------------------------------------------------

# What the fan-out reads of an event.
_PENDING_COLUMNS = (
    events.c.id,
    events.c.account_id,
    events.c.type,
    events.c.target_webhook_id,
    events.c.about_webhook_id,
    events.c.created_at,
)


def _undispatched() -> Select[Any]:
    return (
        select(*_PENDING_COLUMNS)
        .where(IS_UNDISPATCHED)
        .order_by(events.c.id)
        .limit(bindparam("limit", type_=Integer()))
        # Several workers dispatch concurrently: each takes a disjoint batch.
        .with_for_update(skip_locked=True)
    )


UNDISPATCHED = Query(_undispatched())


def _active_webhooks(of_accounts: ColumnElement[bool]) -> Select[Any]:
    return (
        select(webhooks.c.id, webhooks.c.account_id, webhooks.c.events, webhooks.c.filter)
        .where(of_accounts, webhooks.c.is_active == true())
        .order_by(webhooks.c.id)
        # FOR KEY SHARE: a concurrent DELETE of a webhook waits for this batch (and then
        # cascades its new deliveries) instead of failing our INSERT on the foreign key.
        .with_for_update(read=True, key_share=True)
    )


ACTIVE_WEBHOOKS = Query(_active_webhooks(in_list(webhooks.c.account_id, "accounts")))
EVENT_BODIES = Query(
    select(
        events.c.id, events.c.type, events.c.created_at, events.c.data, events.c.previous_attributes
    ).where(in_list(events.c.id, "ids"))
)
# A row supplies every column of ``deliveries``.
INSERT_DELIVERY = Query(insert(dlv))


# PostgreSQL: a batch of rows as ONE statement over arrays (``unnest``), not ``execute_many``'s
# one execution per row. PostgreSQL's CPU per delivery was the drain's limit on the benchmark
# machine (it shares a core with the receiver: ~400 µs per delivery, four executions of a
# statement per delivery in the fan-out and the recorder); one execution per batch plans and
# starts the executor once. SQLite keeps ``execute_many`` (in process: no round trips, and
# its per-row cost is the row's own).
def array_params(table: Any, names: Sequence[str]) -> list[Any]:
    """A bind parameter per column, typed as an array of the column's type (``a_<name>``)."""
    params = []
    for name in names:
        column_type = table.c[name].type
        impl = getattr(column_type, "impl", column_type)  # a TypeDecorator's storage type
        params.append(bindparam(f"a_{name}", type_=postgresql.ARRAY(impl)))
    return params


def _unnest_insert(table: Any, names: Sequence[str], joined: str) -> Query:
    """``INSERT ... SELECT`` of the arrays' rows; ``joined``: a one-row relation joined to them
    (its columns are not inserted)."""
    columns = ", ".join(names)
    arrays = ", ".join(f":a_{name}" for name in names)
    # Names from the table's own definition and constants, built once at import: no input
    # reaches the text.
    rows = f"SELECT new_rows.* FROM unnest({arrays}) AS new_rows{joined}"  # noqa: S608
    statement = f"INSERT INTO {table.name} ({columns}) {rows}"
    return Query(text(statement).bindparams(*array_params(table, names)))


def as_arrays(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    """Rows (dicts) as one list per column, keyed ``a_<column>``: the unnest statements' form."""
    return {f"a_{name}": [row[name] for row in rows] for name in names}


_DELIVERY_NAMES = tuple(column.name for column in dlv.c)


# The stream (GET /v1/events/stream) reads events in commit order, which event ids are not
# (ids are made before the transaction commits, and concurrent transactions commit in any
# order). The dispatcher numbers each batch as it marks it dispatched, and on PostgreSQL
# holds a transaction lock while it does, so numbers are handed out one dispatch transaction
# at a time: a number is never committed after a higher one (SQLite's single writer
# serializes dispatches anyway). A reader that saw number N never later finds a new one below.
_STREAM_LOCK_KEY = 7264711845227365
_STREAM_LOCK = Query(
    select(func.pg_advisory_xact_lock(literal_column(str(_STREAM_LOCK_KEY))).label("locked"))
)
_LAST_STREAM_SEQ = Query(select(func.coalesce(func.max(events.c.stream_seq), 0).label("last")))
# Marked dispatched and numbered in one UPDATE: each is a new version of the (wide) event row
# with every index of ``events`` written again, so two UPDATEs were twice the work.
_DISPATCHED_AS = Query(
    update(events)
    .where(events.c.id == bindparam("b_id"))
    .values(dispatched=True, stream_seq=bindparam("b_seq", type_=events.c.stream_seq.type))
)


# PostgreSQL: the numbers follow the highest one in the same statement (one round trip, not
# two); it runs after the lock's statement, so its snapshot sees every number committed before.
# ``LIMIT cardinality(:a_id)`` changes no result (it is every id): it is how a pooled
# connection's cached generic plan counts the ids, as one (a tenth of an array's presumed ten),
# where it counted ten, and ten probes of ``pk_events`` cost more than one pass over ``events``
# until the table has ~80 pages: each round of a young database's window read every event to
# number a few (docs/benchmarks.md, 152). Custom plans count the array exactly.
_NUMBERING_ON_POSTGRES = (
    "UPDATE events SET dispatched = true, stream_seq = last.seq + numbered.n "
    "FROM (SELECT id, n FROM unnest(:a_id) WITH ORDINALITY AS numbered(id, n) "
    "LIMIT cardinality(:a_id)) AS numbered, "
    "(SELECT coalesce(max(stream_seq), 0) AS seq FROM events) AS last "
    "WHERE events.id = numbered.id"
)
_EVENT_IDS = bindparam("a_id", type_=postgresql.ARRAY(String()))
_DISPATCHED_AS_ON_POSTGRES = Query(text(_NUMBERING_ON_POSTGRES).bindparams(_EVENT_IDS))


# PostgreSQL: the fan-out's INSERT takes the stream's lock itself, so that a dispatch with
# deliveries to write makes one round trip fewer (the lock's own statement was one of the nine
# of a dispatch round, each a wait for a PostgreSQL that shares its core: docs/benchmarks.md).
# The lock is a one-row subquery joined to the rows (a volatile function: never pulled up, so
# evaluated whatever the statement's other columns); the numbering UPDATE is a later statement,
# so its snapshot is taken after the lock, as before. Names and a constant: no input in the text.
INSERT_DELIVERIES_LOCKING_STREAM = _unnest_insert(
    dlv, _DELIVERY_NAMES, f", (SELECT pg_advisory_xact_lock({_STREAM_LOCK_KEY})) AS stream"
)


async def fan_out(
    conn: Connection, rows: Sequence[Mapping[str, Any]], event_ids: Sequence[str]
) -> None:
    """Insert a dispatch's delivery ``rows`` (each supplies every column), then mark its
    ``event_ids`` dispatched and give them, in order, the next stream numbers, in ``conn``'s
    transaction."""
    if conn.dialect.name == "postgresql":
        await insert_deliveries_on_postgres(conn, rows)
        await number_events_on_postgres(conn, event_ids)
        return
    if rows:
        await conn.execute_many(INSERT_DELIVERY, list(rows))
    last = int((await fetch_all(conn, _LAST_STREAM_SEQ, {}))[0].last)
    seqs = list(range(last + 1, last + 1 + len(event_ids)))
    numbered = zip(event_ids, seqs, strict=True)
    await conn.execute_many(_DISPATCHED_AS, [{"b_id": i, "b_seq": seq} for i, seq in numbered])


async def insert_deliveries_on_postgres(
    conn: Connection, rows: Sequence[Mapping[str, Any]]
) -> None:
    """A dispatch's first write on PostgreSQL: its delivery ``rows`` inserted, and the stream's
    lock taken (by the INSERT, or by its own statement when there is no row to write); the
    numbering (``number_events_on_postgres``, or the claim that numbers, ``claim_on_postgres``
    with ``numbering``) must be a later statement of the transaction."""
    if rows:
        await conn.execute(INSERT_DELIVERIES_LOCKING_STREAM, as_arrays(rows, _DELIVERY_NAMES))
    else:
        await fetch_all(conn, _STREAM_LOCK, {})


async def number_events_on_postgres(conn: Connection, event_ids: Sequence[str]) -> None:
    """Mark ``event_ids`` dispatched with the next stream numbers, in order (after
    ``insert_deliveries_on_postgres``, in its transaction)."""
    await conn.execute(_DISPATCHED_AS_ON_POSTGRES, {"a_id": list(event_ids)})


# PostgreSQL: a dispatch round's first statement (``DISPATCH_LOOK_ON_POSTGRES``, built below
# from the same selects), what were three round trips of its eight (docs/benchmarks.md, 98):
# ``UNDISPATCHED``, ``ACTIVE_WEBHOOKS`` of the accounts it found, and ``ANY_RATE_LIMITED_DUE``,
# which the round's claim then skips when it found nothing and no new delivery is a
# rate-limited webhook's. The kinds of its rows:
DISPATCH_EVENT = "e"
DISPATCH_WEBHOOK = "w"
DISPATCH_RATE_LIMITED_DUE = "r"


# -- claiming ---------------------------------------------------------------------------------


# A claim's row: what ``manager._claim_of`` reads, from both forms of the claim.
def _claim_columns(data: Any, previous_attributes: Any) -> tuple[Any, ...]:
    return (
        dlv.c.id,
        dlv.c.webhook_id,
        dlv.c.attempts,
        webhooks.c.url,
        webhooks.c.secret_enc,
        webhooks.c.previous_secret_enc,
        webhooks.c.previous_secret_expires_at,
        events.c.id.label("event_id"),
        events.c.type,
        events.c.created_at,
        data,
        previous_attributes,
        webhooks.c.headers_enc,
        events.c.trace_context,
        webhooks.c.auth_enc,
        webhooks.c.redact,
        webhooks.c.payload,
    )


_CLAIM_JOIN = dlv.join(webhooks, webhooks.c.id == dlv.c.webhook_id).join(
    events, events.c.id == dlv.c.event_id
)


def _fragment(text: str | None) -> orjson.Fragment | None:
    # JSON null (how a None is stored) as None, as decoding it would give.
    return None if text is None or text == "null" else orjson.Fragment(text)


class StoredJson(TypeDecorator[Any]):
    """A JSON column read on SQLite as its stored text in an ``orjson.Fragment``, not decoded:
    the worker's claims there, whose event data goes into the body as stored
    (``delivery.signing.EventJson``). SQLite stores orjson's own text
    (``storage.connector.JSON_CODEC``). PostgreSQL's ``jsonb`` text is its own (keys
    reordered, spaces): there the driver decodes it, as for any JSON column."""

    impl = Text
    cache_ok = True

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        return _fragment if dialect.name == "sqlite" else None


def _claims(data: Any, previous_attributes: Any) -> Query:
    """The claims of the leased deliveries ``ids``, in due order."""
    return Query(
        select(*_claim_columns(data, previous_attributes))
        .select_from(_CLAIM_JOIN)
        .where(in_list(dlv.c.id, "ids"))
        .order_by(dlv.c.next_attempt_at, dlv.c.id)
    )


CLAIMS = _claims(events.c.data, events.c.previous_attributes)
"""The claims of the leased deliveries ``ids``, in due order (PostgreSQL: JSON decoded)."""
_STORED_JSON_COLUMNS = (
    type_coerce(events.c.data, StoredJson()).label("data"),
    type_coerce(events.c.previous_attributes, StoredJson()).label("previous_attributes"),
)
CLAIMS_ON_SQLITE = _claims(*_STORED_JSON_COLUMNS)
"""``CLAIMS`` with the event's JSON as stored (``StoredJson``): about 3% of the worker's CPU per
delivery on SQLite went to decoding it for the claim and encoding it again for the body."""


async def load_claims(conn: Connection, delivery_ids: Sequence[str]) -> list[Any]:
    """The claims (``CLAIMS``' rows) of the leased deliveries ``delivery_ids``, in due order."""
    claims = CLAIMS if conn.dialect.name == "postgresql" else CLAIMS_ON_SQLITE
    return await fetch_all(conn, claims, {"ids": list(delivery_ids)})


LEASE = Query(
    update(dlv)
    .where(in_list(dlv.c.id, "ids"))
    .values(leased_by=bindparam("b_worker"), leased_until=bindparam("b_until"), updated_at=_NOW)
)


def claim_params(
    *,
    worker: str,
    now: datetime,
    until: datetime,
    limit: int,
    per_endpoint: int,
    busy: Mapping[str, int],
    saturated: list[str],
    open_after: int,
    probe_room: int,
) -> dict[str, Any]:
    """The parameters of both forms of the claim: lease up to ``limit`` due deliveries of
    active webhooks without a rate limit to ``worker`` until ``until``, at most
    ``per_endpoint`` in flight per webhook counting ``busy`` (in-flight sends by webhook);
    ``saturated`` webhooks (every slot busy) are not even probed. A webhook whose circuit is
    open (``open_after`` failed attempts in a row or more) is claimed only once its
    ``next_probe_at`` has passed, at most ``probe_room`` in flight, and the claim that takes
    it holds its next probe back to ``until`` (the probe's outcome then sets it)."""
    in_flight = sorted(busy.items())
    return {
        "busy_hooks": [hook for hook, _ in in_flight],
        "busy_counts": [n for _, n in in_flight],
        "saturated": saturated,
        "per_endpoint": per_endpoint,
        "open_after": open_after,
        "probe_room": probe_room,
        "limit": limit,
        "worker": worker,
        "until": until,
        "now": now,
    }


async def claim_unlimited(source: Database | Connection, params: Params) -> list[Any]:
    """Lease due deliveries of webhooks without a rate limit (``claim_params``) and return
    their claims, oldest due first: on PostgreSQL ``claim_on_postgres`` (given the
    ``Database``, one statement in autocommit), on SQLite ``claim_on_sqlite`` in the caller's
    transaction."""
    if source.dialect.name == "postgresql":
        return await fetch_all(source, claim_on_postgres(params), params)
    assert isinstance(source, Connection), "on SQLite a claim runs in the writer's transaction"
    return await claim_on_sqlite(source, params)


def _lease_free() -> ColumnElement[bool]:
    return or_(dlv.c.leased_until.is_(None), dlv.c.leased_until < _NOW)


# SQLite: the claim as three statements, run one after another, inline (the single writer,
# ``BEGIN IMMEDIATE``, serializes claims). Claims go webhook by webhook, so a hanging endpoint's
# backlog costs nothing to step over.


_OPEN_AFTER = bindparam("open_after", type_=Integer())
_IS_OPEN = webhooks.c.consecutive_failures >= _OPEN_AFTER
_PROBE_ALLOWED = or_(
    webhooks.c.consecutive_failures < _OPEN_AFTER,
    webhooks.c.next_probe_at.is_(None),
    webhooks.c.next_probe_at <= _NOW,
)
HOLD_PROBES = Query(
    update(webhooks)
    .where(in_list(webhooks.c.id, "ids"))
    .values(next_probe_at=bindparam("b_until", type_=webhooks.c.next_probe_at.type))
)


def _hooks_with_due_work(skip_saturated: bool) -> Any:
    """Active webhooks with a claimable delivery, the longest-waiting first.

    One index probe per webhook (``ix_deliveries_webhook_due``: its first lease-free due row),
    so the cost grows with the number of active webhooks, never with one endpoint's backlog. A
    webhook whose slots are all busy in this worker (``saturated``) is skipped without being
    probed. A webhook whose circuit is open is probed only once its next probe is due.
    """
    first_due = (
        select(dlv.c.next_attempt_at)
        .where(
            dlv.c.webhook_id == webhooks.c.id,
            IS_PENDING,
            dlv.c.next_attempt_at <= _NOW,
            _lease_free(),
        )
        .order_by(dlv.c.next_attempt_at)
        .limit(1)
        .correlate(webhooks)
        .scalar_subquery()
    )
    hooks = select(
        webhooks.c.id, first_due.label("first_due"), _IS_OPEN.label("circuit_open")
    ).where(
        webhooks.c.is_active == true(),
        webhooks.c.rate_limit.is_(None),  # those are claimed by manager._claim_rate_limited
        _PROBE_ALLOWED,
    )
    if skip_saturated:
        hooks = hooks.where(not_in_list(webhooks.c.id, "saturated"))
    probed = hooks.subquery("probed")
    return (
        select(probed.c.id, probed.c.circuit_open)
        .where(probed.c.first_due.is_not(None))
        .order_by(probed.c.first_due, probed.c.id)
        .limit(bindparam("limit"))
    )


_HOOKS_WITH_DUE_WORK = {flag: Query(_hooks_with_due_work(flag)) for flag in (False, True)}


@functools.lru_cache(maxsize=256)
def _due_rows(hooks: int) -> Query:
    """Each of ``hooks`` webhooks' oldest claimable deliveries, up to its free slots, as claims
    (``CLAIMS_ON_SQLITE``' columns and ``next_attempt_at``) in one statement (parameters
    ``hook_<i>`` and ``limit_<i>``); built once per count."""
    parts = []
    for i in range(hooks):
        part = (
            select(*_claim_columns(*_STORED_JSON_COLUMNS), dlv.c.next_attempt_at)
            .select_from(_CLAIM_JOIN)
            .where(
                dlv.c.webhook_id == bindparam(f"hook_{i}"),
                IS_PENDING,
                dlv.c.next_attempt_at <= _NOW,
                _lease_free(),
            )
            .order_by(dlv.c.next_attempt_at, dlv.c.id)
            .limit(bindparam(f"limit_{i}"))
        )
        parts.append(part.subquery().select())
    return Query(union_all(*parts) if len(parts) > 1 else parts[0])


async def claim_on_sqlite(conn: Connection, params: Params) -> list[Any]:
    """``claim_on_postgres``'s steps, one statement each: the webhooks with due work, each
    one's oldest claimable rows up to its free slots (read as claims: the single writer holds
    them until the COMMIT), and the oldest ``limit`` of those leased. Reading the claims with
    the due rows, not again by id once leased, was one statement of five fewer per round."""
    now, limit, saturated = params["now"], params["limit"], params["saturated"]
    probe: dict[str, Any] = {"now": now, "limit": limit, "open_after": params["open_after"]}
    if saturated:
        probe["saturated"] = saturated
    hooks = await fetch_all(conn, _HOOKS_WITH_DUE_WORK[bool(saturated)], probe)
    if not hooks:
        return []
    busy = dict(zip(params["busy_hooks"], params["busy_counts"], strict=True))
    due: dict[str, Any] = {"now": now}
    for i, hook in enumerate(hooks):
        slots = params["probe_room"] if hook.circuit_open else params["per_endpoint"]
        due[f"hook_{i}"] = hook.id
        # No more than the round takes: every row read is a claim read.
        due[f"limit_{i}"] = max(0, min(limit, slots - busy.get(hook.id, 0)))
    rows = await fetch_all(conn, _due_rows(len(hooks)), due)
    claims = sorted(rows, key=lambda row: (row.next_attempt_at, row.id))[:limit]
    if not claims:
        return []
    picked = [claim.id for claim in claims]
    lease = {"ids": picked, "b_worker": params["worker"], "b_until": params["until"], "now": now}
    await conn.execute(LEASE, lease)
    probing = {hook.id for hook in hooks if hook.circuit_open}
    probed = sorted(probing.intersection(claim.webhook_id for claim in claims))
    if probed:
        await conn.execute(HOLD_PROBES, {"ids": probed, "b_until": params["until"]})
    return claims


# PostgreSQL: the same claim as ``claim_on_sqlite``'s statements, in one (a round trip each
# was most of a claim round's time: the worker's claim rounds ran back to back at full speed,
# and a round took 14 ms for ~32 claims; docs/benchmarks.md). Steps, as CTEs: the webhooks with
# due work and their free slots (``_hooks_with_due_work``), each one's oldest claimable rows
# locked SKIP LOCKED (``_due_rows``, as a LATERAL join), the oldest ``limit`` of those leased
# (``LEASE``), and the claims read back (``CLAIMS``). The predicates repeat those of the Core
# statements above, so the partial indexes serve them. Concurrent workers take disjoint rows
# without waiting.
#
# A webhook's rows are picked by a row comparison, ``(webhook_id, next_attempt_at) BETWEEN
# (hook, -infinity) AND (hook, :now)``, in the order ``webhook_id, next_attempt_at``, not by
# ``webhook_id = hook``: with the equality, PostgreSQL drops ``webhook_id`` from the order (it
# is constant) and, taking every webhook for a third of the rows, walked ``ix_deliveries_due``
# in time order filtering on the webhook, through every due row of the others: beside a hanging
# and a failing endpoint's backlogs the healthy one's claim read 6,000 index entries, three
# times a claim (7-10 ms each, at 3,000 rows per backlog; docs/benchmarks.md). Only
# ``ix_deliveries_webhook_due`` serves the row comparison and the order, so a webhook's
# probe reads its own rows whatever the others' backlogs.
#
# One text per worker (its ``per_endpoint``, a setting), so PostgreSQL plans it five times per
# pooled connection and then runs its generic plan: with one text per ``least(per_endpoint,
# limit)``, the free slots of the round, nearly every claim was planned (125 plans for 129
# claims in a 4,000-event drain, ~1.5 ms each: 50 µs of PostgreSQL's CPU per delivery;
# docs/benchmarks.md). The generic plan is the same index walk (``LIMIT hooks.room`` is not
# known when planning either way; the constant inner ``LIMIT`` tells the planner how few rows
# a webhook gives).
# Names and a number only (``slots``, an int): no input reaches the text.
_CLAIM_ON_POSTGRES = """
WITH busy AS (
    SELECT hook, n FROM unnest(:busy_hooks, :busy_counts) AS b(hook, n)
), probed AS (
    SELECT webhooks.id, (
        SELECT deliveries.next_attempt_at FROM deliveries
        WHERE (deliveries.webhook_id, deliveries.next_attempt_at)
                BETWEEN (webhooks.id, '-infinity'::timestamptz) AND (webhooks.id, :now)
            AND deliveries.status = 'pending'
            AND (deliveries.leased_until IS NULL OR deliveries.leased_until < :now)
        ORDER BY deliveries.webhook_id, deliveries.next_attempt_at LIMIT 1
    ) AS first_due, webhooks.consecutive_failures >= :open_after AS circuit_open
    FROM webhooks
    WHERE webhooks.is_active = true AND webhooks.rate_limit IS NULL
        AND webhooks.id <> ALL (:saturated)
        AND (webhooks.consecutive_failures < :open_after OR webhooks.next_probe_at IS NULL
            OR webhooks.next_probe_at <= :now)
), hooks AS (
    -- Never more than :limit from one webhook: a row locked here and not leased is one another
    -- worker's claim skips until this transaction ends. An open circuit: :probe_room at most.
    SELECT probed.id, probed.circuit_open, greatest(0, least(
        CASE WHEN probed.circuit_open THEN :probe_room ELSE :per_endpoint END
            - coalesce(busy.n, 0),
        :limit)) AS room
    FROM probed LEFT JOIN busy ON busy.hook = probed.id
    WHERE probed.first_due IS NOT NULL
    ORDER BY probed.first_due, probed.id
    LIMIT :limit
), due AS (
    -- The inner LIMIT is a constant (``claim_on_postgres``: per_endpoint, which ``room`` never
    -- exceeds): with ``LIMIT hooks.room`` alone PostgreSQL assumed a tenth of the webhook's
    -- rows and chose to sort them from another index. The outer LIMIT takes the first ``room``
    -- rows as the index walk yields them, oldest first (the webhook is constant, so its order
    -- is (next_attempt_at, id)); with no sort between them, a row is locked only when it is
    -- taken, so the statement locks the rows it leases and no more.
    SELECT oldest.id, oldest.next_attempt_at
    FROM hooks CROSS JOIN LATERAL (
        SELECT locked.id, locked.next_attempt_at FROM (
            SELECT deliveries.id, deliveries.next_attempt_at FROM deliveries
            WHERE (deliveries.webhook_id, deliveries.next_attempt_at)
                    BETWEEN (hooks.id, '-infinity'::timestamptz) AND (hooks.id, :now)
                AND deliveries.status = 'pending'
                AND (deliveries.leased_until IS NULL OR deliveries.leased_until < :now)
            ORDER BY deliveries.webhook_id, deliveries.next_attempt_at, deliveries.id
            LIMIT {slots}
            FOR UPDATE SKIP LOCKED
        ) AS locked
        LIMIT hooks.room
    ) AS oldest
), picked AS (
    SELECT id FROM due ORDER BY next_attempt_at, id LIMIT :limit
), leased AS (
    UPDATE deliveries SET leased_by = :worker, leased_until = :until, updated_at = :now
    FROM picked WHERE deliveries.id = picked.id
    RETURNING deliveries.id, deliveries.webhook_id, deliveries.attempts, deliveries.event_id,
        deliveries.next_attempt_at
), held AS (
    -- A probe taken holds the next one back. SKIP LOCKED: never wait for a webhook row here
    -- while holding delivery rows (a PATCH locks them the other way round); a hold skipped is
    -- set by the probe's outcome anyway.
    UPDATE webhooks SET next_probe_at = :until
    WHERE webhooks.id IN (
        SELECT open_hook.id FROM webhooks AS open_hook JOIN hooks ON hooks.id = open_hook.id
        WHERE hooks.circuit_open AND open_hook.id IN (SELECT leased.webhook_id FROM leased)
        FOR UPDATE OF open_hook SKIP LOCKED
    )
)
SELECT leased.id, leased.webhook_id, leased.attempts, webhooks.url, webhooks.secret_enc,
    webhooks.previous_secret_enc, webhooks.previous_secret_expires_at, events.id AS event_id,
    events.type, events.created_at, events.data, events.previous_attributes, webhooks.headers_enc,
    events.trace_context, webhooks.auth_enc, webhooks.redact, webhooks.payload
FROM leased
JOIN webhooks ON webhooks.id = leased.webhook_id
JOIN events ON events.id = leased.event_id
ORDER BY leased.next_attempt_at, leased.id
"""


def claim_on_postgres(params: Params, *, numbering: bool = False) -> Query:
    """The PostgreSQL claim for ``params`` (``claim_params``): its text caps the rows of one
    webhook at ``per_endpoint``, a constant, so that the planner knows how few rows a webhook
    gives; one text per ``per_endpoint`` (a worker's setting), whatever the round's ``limit``,
    so its plan is cached. ``numbering``: the claim also marks the events ``a_id`` dispatched
    with the next stream numbers (``number_and_claim_on_postgres``)."""
    return _claim_on_postgres(int(params["per_endpoint"]), numbering)


async def number_and_claim_on_postgres(
    conn: Connection, event_ids: Sequence[str], params: Params
) -> list[Any]:
    """A dispatch round's last statement on PostgreSQL: its events numbered
    (``number_events_on_postgres``) and the claim (``claim_unlimited``), one round trip where
    they were two. After ``insert_deliveries_on_postgres``, in its transaction: the numbering
    then reads the highest number after the stream's lock was taken (a statement's snapshot is
    taken when it starts), and the claim sees the deliveries just inserted."""
    numbered = {**params, "a_id": list(event_ids)}
    return await fetch_all(conn, claim_on_postgres(params, numbering=True), numbered)


# The numbering as a data-modifying CTE in front of the claim's: PostgreSQL runs it to the end
# whether or not the query reads it, with the claim's snapshot; the claim reads the events'
# type and data, which it does not change.
_NUMBERING_CTE = f"\nWITH dispatched AS ({_NUMBERING_ON_POSTGRES}), "


@functools.lru_cache(maxsize=16)
def _claim_on_postgres(slots: int, numbering: bool) -> Query:
    claim = _CLAIM_ON_POSTGRES.format(slots=int(slots))
    if numbering:
        claim = _NUMBERING_CTE + claim.removeprefix("\nWITH ")
    return Query(
        text(claim)
        .bindparams(
            *((_EVENT_IDS,) if numbering else ()),
            bindparam("busy_hooks", type_=StringList()),
            bindparam("busy_counts", type_=postgresql.ARRAY(Integer())),
            bindparam("saturated", type_=StringList()),
            bindparam("per_endpoint", type_=Integer()),
            bindparam("open_after", type_=Integer()),
            bindparam("probe_room", type_=Integer()),
            bindparam("limit", type_=Integer()),
            bindparam("worker", type_=String()),
            bindparam("until", type_=dlv.c.leased_until.type),
            _NOW,
        )
        .columns(*_claim_columns(events.c.data, events.c.previous_attributes))
    )


# -- rate-limited webhooks (``manager``: the window in the webhook row) ------------------------


_ONE = literal_column("1", Integer())  # a LIMIT written into the text (ANY_RATE_LIMITED_DUE)


def _rate_limited_with_due_work(*, lock: bool) -> Any:
    # A scalar subquery (one index probe per rate-limited webhook), not EXISTS: PostgreSQL
    # turned the EXISTS into a semi-join that read every due delivery of every webhook, rate
    # limited or not, to find none (6 ms per claim round at 10,000 due rows; docs/benchmarks.md).
    # A scalar subquery is never pulled up, so it runs only for the few rate-limited webhooks.
    due = (
        select(dlv.c.id)
        .where(dlv.c.webhook_id == webhooks.c.id, IS_PENDING, dlv.c.next_attempt_at <= _NOW)
        .where(_lease_free())
        .limit(_ONE)
        .correlate(webhooks)
        .scalar_subquery()
        .is_not(None)
    )
    query = (
        select(webhooks.c.id, webhooks.c.rate_limit, webhooks.c.rate_starts)
        .where(webhooks.c.rate_limit.is_not(None), webhooks.c.is_active == true(), due)
        .order_by(webhooks.c.id)
    )
    if lock:
        query = query.where(not_in_list(webhooks.c.id, "saturated")).with_for_update(
            skip_locked=True, key_share=True
        )
    return query


RATE_LIMITED_TO_CLAIM = Query(_rate_limited_with_due_work(lock=True))
"""Rate-limited webhooks with due work, but ``saturated``, each row held (FOR NO KEY UPDATE
SKIP LOCKED: another worker skips that webhook until this claim commits)."""
RATE_LIMITED_WAITING = Query(_rate_limited_with_due_work(lock=False))
# LIMIT 1 as a constant, not a bind parameter: planning a generic plan, PostgreSQL takes a
# bound LIMIT for a tenth of the rows, so the generic plan costed twice the custom one and the
# look was planned afresh on every call, for ever (124 plans in 121 calls in a drain, ~1 ms of
# PostgreSQL each: the planner reads the due index's end for ``next_attempt_at <= now``). With
# the constant both plans cost the same and the look runs its cached plan from the sixth call.
ANY_RATE_LIMITED_DUE = Query(_rate_limited_with_due_work(lock=False).limit(_ONE))


def _dispatch_look_on_postgres() -> CompoundSelect[Any]:
    """``DISPATCH_LOOK_ON_POSTGRES``: ``UNDISPATCHED``, ``ACTIVE_WEBHOOKS`` of the accounts it
    found and ``ANY_RATE_LIMITED_DUE``, the same selects with their locks, as CTEs of one
    statement (the first two MATERIALIZED, so each runs once and locks what it read)."""
    pending = _undispatched().cte("pending").prefix_with("MATERIALIZED")
    hooks = (
        _active_webhooks(webhooks.c.account_id.in_(select(pending.c.account_id)))
        .add_columns(webhooks.c.rate_limit.is_not(None).label("rate_limited"))
        .cte("hooks")
        .prefix_with("MATERIALIZED")
    )
    limited = _rate_limited_with_due_work(lock=False).limit(_ONE).cte("limited")
    return union_all(
        select(
            _kind(DISPATCH_EVENT).label("kind"),
            *pending.c,
            *_nulls_of(webhooks.c.events, webhooks.c.filter, hooks.c.rate_limited),
        ),
        select(
            _kind(DISPATCH_WEBHOOK),
            hooks.c.id,
            hooks.c.account_id,
            *_nulls_of(*_PENDING_COLUMNS[2:]),
            hooks.c.events,
            hooks.c.filter,
            hooks.c.rate_limited,
        ),
        select(
            _kind(DISPATCH_RATE_LIMITED_DUE),
            limited.c.id,
            *_nulls_of(*_PENDING_COLUMNS[1:], webhooks.c.events, webhooks.c.filter),
            *_nulls_of(hooks.c.rate_limited),
        ),
    ).order_by(literal_column("kind"), literal_column("id"))


def _kind(kind: str) -> ColumnElement[str]:
    # A constant of the statement's text, not a parameter: the round passes only its own.
    return literal_column(f"'{kind}'", String())


def _nulls_of(*columns: ColumnElement[Any]) -> list[ColumnElement[Any]]:
    """NULLs typed and named as ``columns``, for the rows of a UNION that have no such
    column (the first select's names are the result's)."""
    return [cast(null(), column.type).label(column.name) for column in columns]


DISPATCH_LOOK_ON_POSTGRES = Query(_dispatch_look_on_postgres())
"""A PostgreSQL dispatch round's events, their accounts' webhooks and its look for
rate-limited work (parameters ``limit``, ``now``), in one statement of its transaction: one
row per event (kind ``DISPATCH_EVENT``), per webhook (``DISPATCH_WEBHOOK``, with whether it
is rate limited) and for a rate-limited webhook with due work (``DISPATCH_RATE_LIMITED_DUE``,
at most one)."""
RATE_LIMITED_DUE_ROWS = Query(
    select(dlv.c.id)
    .where(
        dlv.c.webhook_id == bindparam("hook"),
        IS_PENDING,
        dlv.c.next_attempt_at <= _NOW,
        _lease_free(),
    )
    .order_by(dlv.c.next_attempt_at, dlv.c.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)
SET_RATE_STARTS = Query(
    update(webhooks)
    .where(webhooks.c.id == bindparam("b_id"))
    .values(rate_starts=bindparam("b_starts", type_=webhooks.c.rate_starts.type))
)
RATE_STARTS_OF = Query(
    select(webhooks.c.rate_starts)
    .where(webhooks.c.id == bindparam("hook"))
    .with_for_update(key_share=True)
)


def _next_wakes() -> Any:
    """What the scheduler may sleep until, as rows of (``due``, ``probe``).

    One row per active webhook whose circuit is open: its oldest pending attempt and its next
    probe (it is claimable at the later of the two, ``manager.next_due_at``), so its retries,
    which the claim holds back until the probe, wake nothing before it, and a probe falling due
    wakes the scheduler once instead of waiting for a poll. Then, without a probe, the earliest
    future attempt of any other webhook: ``ix_deliveries_due`` in order, each row's webhook
    looked up until one with a closed circuit (an open one has few future rows: its attempts
    are paced by its probes)."""
    probe_type = webhooks.c.next_probe_at.type
    first_pending = (
        select(dlv.c.next_attempt_at)
        .where(dlv.c.webhook_id == webhooks.c.id, IS_PENDING)
        .order_by(dlv.c.next_attempt_at)
        .limit(1)
        .correlate(webhooks)
        .scalar_subquery()
    )
    open_circuits = select(
        type_coerce(first_pending, dlv.c.next_attempt_at.type).label("due"),
        webhooks.c.next_probe_at.label("probe"),
    ).where(webhooks.c.is_active == true(), _IS_OPEN)
    closed_circuits = (
        select(dlv.c.next_attempt_at.label("due"), cast(null(), probe_type).label("probe"))
        .select_from(dlv.join(webhooks, webhooks.c.id == dlv.c.webhook_id))
        .where(
            IS_PENDING,
            dlv.c.next_attempt_at > _NOW,
            webhooks.c.consecutive_failures < _OPEN_AFTER,
        )
        .order_by(dlv.c.next_attempt_at)
        .limit(1)
    )
    return union_all(open_circuits, closed_circuits.subquery().select())


NEXT_WAKES = Query(_next_wakes())
"""The scheduler's wake-up times (``_next_wakes``; parameters ``now`` and ``open_after``)."""


# -- outcomes ---------------------------------------------------------------------------------

# SQLite's form of the recorder (``manager._store_on_sqlite``; PostgreSQL's is
# ``RECORD_ON_POSTGRES`` below), run under the single writer.
DELIVERY_STATES = Query(
    select(dlv.c.id, dlv.c.leased_by, dlv.c.status).where(in_list(dlv.c.id, "ids"))
)
# Every column but the autoincrement id.
INSERT_ATTEMPT = Query(
    insert(delivery_attempts),
    column_keys=[c.name for c in delivery_attempts.c if c.name != "id"],
)
TRANSITION = Query(
    update(dlv)
    .where(dlv.c.id == bindparam("b_id"), dlv.c.leased_by == bindparam("b_worker"))
    .values(
        status=bindparam("b_status"),
        attempts=dlv.c.attempts + 1,
        next_attempt_at=bindparam("b_next"),
        last_status_code=bindparam("b_code"),
        last_error=bindparam("b_error"),
        leased_by=None,
        leased_until=None,
        updated_at=bindparam("b_now"),
    )
)
"""A delivery's next state after an attempt, only while ``b_worker`` holds its lease."""


EXHAUSTED = Query(
    select(*_DELIVERY_COLUMNS, dlv.c.account_id).where(
        in_list(dlv.c.id, "ids"), dlv.c.status == literal_column("'failed'")
    )
)
# A webhook whose every attempt in a batch succeeded ends the batch healthy whatever its row
# said (``manager._circuit_after`` with a success last: no run of failures, no probe): its row
# is written only if it was not healthy already. No read, no decision in Python.
_NOT_HEALTHY = (
    "(failing_since IS NOT NULL OR consecutive_failures <> 0 OR next_probe_at IS NOT NULL)"
)
HEAL = Query(
    update(webhooks)
    .where(in_list(webhooks.c.id, "ids"), text(_NOT_HEALTHY))
    .values(failing_since=None, consecutive_failures=0, next_probe_at=None)
)
"""The webhooks ``ids`` healthy again (each had only successes in the batch)."""

# PostgreSQL: a whole batch of outcomes as ONE statement, in autocommit when nothing is left
# for Python to decide (every attempt succeeded), else the first statement of the recorder's
# transaction. It does what the SQLite form does in six (``manager._store_on_sqlite``):
#   hooks    the batch's webhooks' rows, FOR NO KEY UPDATE, in id order, before any other row
#            (the lock order, in the module's docstring): the health written after the
#            statement, in its transaction, then never waits while holding deliveries or
#            counters (two workers recording a flaky endpoint deadlocked so);
#   locked   the deliveries' rows, FOR UPDATE, as they are now (a deleted one is skipped), one
#            primary-key probe per id, in id order (below);
#   stored   the outcomes of deliveries that still exist, and whether this worker still holds
#            each one's lease (``owned``: leased_by is the worker, status still pending);
#   attempts every stored attempt, in batch order;
#   counted  the rollup counters (``delivery.stats``: per span, one per status with
#            ``any_latency``, one per latency bin with ``any_status``), in one order
#            (C collation: Python's string order, so it is ``stats.rollup_rows``' order) so
#            concurrent recorders never deadlock on them;
#   moved    each owned delivery's next state, once (a delivery twice in a batch, never by
#            design, moves by its first outcome, as one UPDATE per row would: the second finds
#            the lease released);
#   healed   the webhooks whose every stored attempt succeeded (``HEAL``);
# and returns one row per stored outcome: its ordinal ``n`` in the batch and, when its delivery
# just failed for good, the delivery (for ``delivery.exhausted``), else NULLs.
#
# ``locked`` reads each delivery in a LATERAL subquery of its own (planned apart, one id a run),
# not by ``id = ANY(:a_delivery_id)``: each pooled connection runs its cached generic plan,
# made at the sixth run on the table as it was then, and for ``= ANY`` of an array of unknown
# length PostgreSQL costs ten index probes against one pass over a few pages, so a plan made
# at a few hundred rows (a young database's, just analyzed: ``manager.analyze_young_tables``)
# read all of ``deliveries`` sequentially at every batch while the table grew (11 ms a batch
# at 6,300 rows, 0.1 ms by the key; docs/benchmarks.md, 129). One probe by the key costs less
# than a pass from ~200 rows on. ``LIMIT cardinality(..)`` changes no result (the distinct ids
# are never more): it is how the generic plan counts the ids, as one (a tenth of the array's
# ten), where the custom plans count them exactly; costed at ten probes, the generic plan cost
# more than a small batch's custom plans and PostgreSQL planned every run afresh, ~1 ms each.
# ``moved``'s UPDATE joins by ``id``: its plan, made from a young table's statistics, read the
# whole table (docs/benchmarks.md, 130) until the worker's next look had the grown tables
# analyzed again (``manager.analyze_young_tables``; 152), and probes by the key since.
_OUTCOME_ATTEMPT_NAMES: tuple[str, ...] = ("delivery_id", "webhook_id", "started_at")
_OUTCOME_ATTEMPT_NAMES += ("duration_ms", "status_code", "error", "response_body", "succeeded")
_OUTCOME_NAMES = (*_OUTCOME_ATTEMPT_NAMES, "status", "next_attempt_at", "second", "rollup_status")
_OUTCOME_NAMES += ("latency_bin",)
_RECORD_ON_POSTGRES_SQL = """
WITH outcome AS (
    SELECT * FROM unnest(:a_delivery_id, :a_webhook_id, :a_started_at, :a_duration_ms,
        :a_status_code, :a_error, :a_response_body, :a_succeeded, :a_status, :a_next_attempt_at,
        :a_second, :a_rollup_status, :a_latency_bin)
        WITH ORDINALITY AS o(delivery_id, webhook_id, started_at, duration_ms, status_code, error,
            response_body, succeeded, status, next_attempt_at, second, rollup_status, latency_bin,
            n)
),
hooks AS (
    SELECT held.id
    FROM (SELECT DISTINCT webhook_id FROM unnest(:a_webhook_id) AS wanted(webhook_id)
        ORDER BY webhook_id LIMIT cardinality(:a_webhook_id)) AS wanted
    CROSS JOIN LATERAL (
        SELECT id FROM webhooks WHERE webhooks.id = wanted.webhook_id FOR NO KEY UPDATE
    ) AS held
),
locked AS (
    SELECT found.id, found.leased_by, found.status
    FROM (SELECT DISTINCT delivery_id FROM unnest(:a_delivery_id) AS wanted(delivery_id)
        ORDER BY delivery_id LIMIT cardinality(:a_delivery_id)) AS wanted
    CROSS JOIN LATERAL (
        SELECT id, leased_by, status FROM deliveries WHERE deliveries.id = wanted.delivery_id
        FOR UPDATE
    ) AS found
    -- Always true: a one-time filter, so every webhook is held before any delivery is locked.
    WHERE (SELECT count(*) FROM hooks) >= 0
),
stored AS (
    SELECT outcome.*,
        locked.leased_by IS NOT DISTINCT FROM :worker AND locked.status = 'pending' AS owned
    FROM outcome JOIN locked ON locked.id = outcome.delivery_id
),
attempts AS (
    INSERT INTO delivery_attempts (delivery_id, webhook_id, started_at, duration_ms, status_code,
        error, response_body, succeeded)
    SELECT delivery_id, webhook_id, started_at, duration_ms, status_code, error, response_body,
        succeeded
    FROM stored ORDER BY n
),
counted AS (
    INSERT INTO attempt_rollups (webhook_id, span, bucket_start, status, latency_bin, attempts)
    SELECT webhook_id, span, to_timestamp(second - second % span), status, latency_bin,
        count(*)
    FROM (
        SELECT webhook_id, second, rollup_status AS status,
            CAST(:any_latency AS integer) AS latency_bin
        FROM stored
        UNION ALL
        SELECT webhook_id, second, CAST(:any_status AS varchar), latency_bin FROM stored
    ) AS fact CROSS JOIN unnest(:spans) AS span
    GROUP BY webhook_id, span, second - second % span, status, latency_bin
    ORDER BY webhook_id COLLATE "C", span, second - second % span, status COLLATE "C",
        latency_bin
    ON CONFLICT (webhook_id, span, bucket_start, status, latency_bin)
    DO UPDATE SET attempts = attempt_rollups.attempts + excluded.attempts
),
moved AS (
    UPDATE deliveries SET status = o.status, attempts = deliveries.attempts + 1,
        next_attempt_at = o.next_attempt_at, last_status_code = o.status_code,
        last_error = o.error, leased_by = NULL, leased_until = NULL, updated_at = :now
    FROM (SELECT DISTINCT ON (delivery_id) * FROM stored WHERE owned ORDER BY delivery_id, n) AS o
    WHERE deliveries.id = o.delivery_id AND deliveries.leased_by = :worker
    RETURNING deliveries.*
),
healed AS (
    UPDATE webhooks SET failing_since = NULL, consecutive_failures = 0, next_probe_at = NULL
    WHERE id IN (SELECT webhook_id FROM stored GROUP BY webhook_id HAVING bool_and(succeeded))
        AND {not_healthy}
)
SELECT stored.n, moved.id, moved.webhook_id, moved.event_id, moved.event_type, moved.status,
    moved.attempts, moved.last_status_code, moved.last_error, moved.next_attempt_at,
    moved.created_at, moved.updated_at, moved.account_id
FROM stored LEFT JOIN moved ON moved.id = stored.delivery_id AND moved.status = 'failed'
ORDER BY stored.n
"""
RECORD_ON_POSTGRES = Query(
    # HEAL's condition, spelled once; a constant: no input reaches the text.
    text(_RECORD_ON_POSTGRES_SQL.format(not_healthy=_NOT_HEALTHY))
    .bindparams(
        *array_params(delivery_attempts, _OUTCOME_ATTEMPT_NAMES),
        *array_params(dlv, ("status", "next_attempt_at")),
        bindparam("a_second", type_=postgresql.ARRAY(BigInteger())),
        bindparam("a_rollup_status", type_=postgresql.ARRAY(String())),
        bindparam("a_latency_bin", type_=postgresql.ARRAY(Integer())),
        bindparam("spans", type_=postgresql.ARRAY(Integer())),
        bindparam("any_status", type_=String()),
        bindparam("any_latency", type_=Integer()),
        bindparam("worker", type_=String()),
        _NOW,
    )
    .columns(literal_column("n", Integer()), *_DELIVERY_COLUMNS, dlv.c.account_id)
)
"""A batch of outcomes (``outcome_arrays``), stored as ``manager.record_outcomes`` says."""


def outcome_arrays(
    outcomes: Sequence[tuple[Any, ...]], *, worker: str, now: datetime, rollup: Mapping[str, Any]
) -> dict[str, Any]:
    """``RECORD_ON_POSTGRES``'s parameters: ``outcomes`` one tuple per attempt, its values in
    ``_OUTCOME_NAMES``' order; ``rollup`` the counters' constants (``spans``, ``any_status``,
    ``any_latency``)."""
    columns = zip(*outcomes, strict=True)
    arrays = {
        f"a_{name}": list(values) for name, values in zip(_OUTCOME_NAMES, columns, strict=True)
    }
    return {**arrays, **rollup, "worker": worker, "now": now}


WEBHOOK_HEALTH = Query(
    select(
        webhooks.c.id,
        webhooks.c.failing_since,
        webhooks.c.is_active,
        webhooks.c.consecutive_failures,
        webhooks.c.next_probe_at,
    ).where(in_list(webhooks.c.id, "ids"))
)
SET_HEALTH = Query(
    update(webhooks)
    .where(webhooks.c.id == bindparam("b_id"))
    .values(
        failing_since=bindparam("b_since", type_=webhooks.c.failing_since.type),
        consecutive_failures=webhooks.c.consecutive_failures * bindparam("b_kept", type_=Integer())
        + bindparam("b_failures", type_=Integer()),
        next_probe_at=bindparam("b_probe", type_=webhooks.c.next_probe_at.type),
    )
)
"""A webhook's run of failures, counted in SQL (kept * run + failures; kept is 0 after a
success in the batch), so two workers recording at once both count, and its circuit."""
DISABLE_WEBHOOK = Query(
    update(webhooks)
    .where(webhooks.c.id == bindparam("webhook_id"))
    .values(
        is_active=False,
        disabled_reason=bindparam("reason", type_=webhooks.c.disabled_reason.type),
        updated_at=_NOW,
    )
    .returning(*webhooks.c)
)
"""Deactivate a webhook; returns its row."""
DISABLED_WEBHOOKS = Query(
    select(
        webhooks.c.id,
        webhooks.c.account_id,
        webhooks.c.url,
        webhooks.c.name,
        webhooks.c.disabled_reason,
    ).where(in_list(webhooks.c.id, "ids"))
)
CANCEL_PENDING = Query(
    update(dlv)
    .where(dlv.c.webhook_id == bindparam("webhook_id"), IS_PENDING)
    .values(status="cancelled", next_attempt_at=None, updated_at=_NOW)
)


# -- leases -----------------------------------------------------------------------------------

EXTEND_LEASES = Query(
    update(dlv)
    .where(in_list(dlv.c.id, "ids"), dlv.c.leased_by == bindparam("b_worker"))
    .values(leased_until=bindparam("b_until"))
)
RELEASE = Query(
    update(dlv)
    .where(in_list(dlv.c.id, "ids"), dlv.c.leased_by == bindparam("b_worker"))
    .values(leased_by=None, leased_until=None)
)


# -- API: deliveries of a webhook, every statement scoped by account -------------------------


def _page_of_deliveries(shape: tuple[bool, bool, bool]) -> Any:
    """A page of a webhook's deliveries, newest first; ``shape``: (after a ``cursor``, of one
    ``status``, skipping ``offset`` rows)."""
    after_cursor, of_status, skipping = shape
    query = (
        select(*_DELIVERY_COLUMNS)
        .where(
            dlv.c.account_id == bindparam("account_id"),
            dlv.c.webhook_id == bindparam("webhook_id"),
        )
        .order_by(dlv.c.id.desc())
        .limit(bindparam("limit", type_=Integer()))
    )
    if after_cursor:
        query = query.where(dlv.c.id < bindparam("cursor"))
    if of_status:
        query = query.where(dlv.c.status == bindparam("status"))
    if skipping:
        query = query.offset(bindparam("offset", type_=Integer()))
    return query


PAGE_OF_DELIVERIES = QueryShapes(_page_of_deliveries)


def _owned() -> tuple[ColumnElement[bool], ...]:
    """The delivery ``delivery_id``, only if it is the account's and the webhook's."""
    return (
        dlv.c.id == bindparam("delivery_id"),
        dlv.c.account_id == bindparam("account_id"),
        dlv.c.webhook_id == bindparam("webhook_id"),
    )


OWNED_DELIVERY = Query(select(*_DELIVERY_COLUMNS).where(*_owned()))
ATTEMPT_LOG = Query(
    select(delivery_attempts)
    .where(delivery_attempts.c.delivery_id == bindparam("delivery_id"))
    .order_by(delivery_attempts.c.id)
)
RETRY_DELIVERY = Query(
    update(dlv)
    .where(*_owned(), or_(dlv.c.status != "pending", dlv.c.leased_by.is_(None)))
    .values(status="pending", next_attempt_at=_NOW, updated_at=_NOW)
)
"""Due again now, whatever its state, unless an attempt is in flight."""
PROBE_NOW = Query(
    update(webhooks)
    .where(webhooks.c.id == bindparam("b_id"), webhooks.c.account_id == bindparam("b_account"))
    .values(next_probe_at=None)
)
"""Someone asked for an attempt now: an open circuit's next probe is due at once."""


# -- retention and queue figures --------------------------------------------------------------

EXPIRED_EVENTS = Query(
    select(events.c.id)
    .where(
        events.c.created_at < bindparam("cutoff", type_=events.c.created_at.type),
        events.c.dispatched == true(),
    )
    .order_by(events.c.created_at)
    .limit(bindparam("limit"))
)
"""Up to ``limit`` dispatched events created before ``cutoff``, oldest first."""
DELETE_EVENTS = Query(delete(events).where(in_list(events.c.id, "ids")))
COUNT_UNDISPATCHED = Query(select(func.count()).where(IS_UNDISPATCHED))
COUNT_PENDING = Query(select(func.count()).select_from(dlv).where(IS_PENDING))
DUE_NOW = Query(
    select(func.count(), func.min(dlv.c.next_attempt_at)).where(
        and_(IS_PENDING, dlv.c.next_attempt_at <= _NOW)
    )
)
"""(how many deliveries are due, the earliest due time)."""


# -- recovery ---------------------------------------------------------------------------------

_SINCE = bindparam("since", type_=events.c.created_at.type)
_UNTIL = bindparam("until", type_=events.c.created_at.type)
_IS_FAILED_OR_CANCELLED = or_(
    dlv.c.status == literal_column("'failed'"), dlv.c.status == literal_column("'cancelled'")
)


def _failed_in_window() -> Any:
    """A webhook's failed or cancelled deliveries of events in the window."""
    return (
        select(dlv.c.id)
        .select_from(dlv.join(events, events.c.id == dlv.c.event_id))
        .where(
            dlv.c.webhook_id == bindparam("webhook_id"),
            _IS_FAILED_OR_CANCELLED,
            events.c.created_at >= _SINCE,
            events.c.created_at <= _UNTIL,
        )
    )


def _missed_in_window() -> Any:
    """The window's events of the subscribed types with no delivery to the webhook: the
    candidates, of which the webhook gets those the fan-out's rule gives it
    (``manager.received_by``)."""
    return select(
        events.c.id,
        events.c.account_id,
        events.c.type,
        events.c.created_at,
        events.c.target_webhook_id,
        events.c.about_webhook_id,
    ).where(
        events.c.account_id == bindparam("account_id"),
        events.c.id >= bindparam("id_from"),
        events.c.created_at >= _SINCE,
        events.c.created_at <= _UNTIL,
        # Undispatched events are the fan-out's: it gives them their deliveries.
        events.c.dispatched == true(),
        events.c.target_webhook_id.is_(None),
        in_list(events.c.type, "types"),
        ~select(dlv.c.id)
        .where(dlv.c.event_id == events.c.id, dlv.c.webhook_id == bindparam("webhook_id"))
        .exists(),
    )


def _batch(query: Any, key: Any) -> Query:
    return Query(query.where(key > bindparam("after")).order_by(key).limit(bindparam("limit")))


def _count(query: Any) -> Query:
    return Query(select(func.count().label("n")).select_from(query.subquery()))


FAILED_BATCH = _batch(_failed_in_window(), dlv.c.id)
MISSED_BATCH = _batch(_missed_in_window(), events.c.id)
FAILED_COUNT = _count(_failed_in_window())
SCHEDULE_AGAIN = Query(
    update(dlv)
    .where(in_list(dlv.c.id, "ids"), _IS_FAILED_OR_CANCELLED)
    .values(
        status="pending", next_attempt_at=_NOW, leased_by=None, leased_until=None, updated_at=_NOW
    )
)
HAVE_DELIVERY = Query(
    select(dlv.c.event_id).where(
        dlv.c.webhook_id == bindparam("webhook_id"), in_list(dlv.c.event_id, "ids")
    )
)


def _webhook_for_recovery(lock: bool) -> Query:
    query = select(
        webhooks.c.id,
        webhooks.c.account_id,
        webhooks.c.is_active,
        webhooks.c.events,
        webhooks.c.filter,
        webhooks.c.created_at,
    ).where(
        webhooks.c.id == bindparam("webhook_id"), webhooks.c.account_id == bindparam("account_id")
    )
    # FOR NO KEY UPDATE: concurrent recoveries of one webhook take turns (they would both
    # create the same missing deliveries), while the fan-out's FOR KEY SHARE goes on.
    return Query(query.with_for_update(key_share=True) if lock else query)


WEBHOOK_FOR_RECOVERY = _webhook_for_recovery(lock=False)
WEBHOOK_FOR_RECOVERY_LOCKED = _webhook_for_recovery(lock=True)


# PostgreSQL: the statistics of a young database (``manager.analyze_young_tables``). A table
# never analyzed has ``reltuples`` -1, and one analyzed has in ``relpages`` its pages then;
# autovacuum analyzes it only at its next look (``autovacuum_naptime``, a minute by default),
# and meanwhile each pooled connection's cached generic plans of the worker's statements are
# the ones made on the table as it was at the last ``ANALYZE`` (or before any). A table is
# young until analyzed, and again once it holds half as many pages again as then (an empty one
# is not: its plans read nothing).
YOUNG_TABLES_ON_POSTGRES = Query(
    text(
        "SELECT relname FROM pg_class "
        "WHERE oid IN ('deliveries'::regclass, 'events'::regclass) AND (reltuples < 0 "
        "OR pg_relation_size(oid) > 0 "
        "AND 2 * pg_relation_size(oid) >= 3 * relpages * current_setting('block_size')::bigint)"
    ).columns(relname=String())
)
"""The delivery tables (``deliveries``, ``events``) PostgreSQL never analyzed, or grown by half
since it last did."""
ANALYZE_ON_POSTGRES = Query(text("ANALYZE deliveries, events"))


def worker_statements_on_sqlite(hooks: int) -> list[Query]:
    """The statements a SQLite worker's rounds and recorder run (its claims of up to ``hooks``
    webhooks at once among them), for ``manager.ready_statements_on_sqlite`` to compile before
    the first round: each is otherwise compiled on its first run, on the path of the first
    events (docs/benchmarks.md, 221)."""
    return [
        UNDISPATCHED,
        ACTIVE_WEBHOOKS,
        EVENT_BODIES,
        INSERT_DELIVERY,
        _LAST_STREAM_SEQ,
        _DISPATCHED_AS,
        RATE_LIMITED_TO_CLAIM,
        *_HOOKS_WITH_DUE_WORK.values(),
        *(_due_rows(count) for count in range(1, hooks + 1)),
        LEASE,
        HOLD_PROBES,
        NEXT_WAKES,
        RATE_LIMITED_WAITING,
        EXTEND_LEASES,
        DELIVERY_STATES,
        INSERT_ATTEMPT,
        TRANSITION,
        EXHAUSTED,
        HEAL,
        WEBHOOK_HEALTH,
        SET_HEALTH,
    ]
