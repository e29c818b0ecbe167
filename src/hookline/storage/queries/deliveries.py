"""Every statement of the delivery engine: fan-out, the claim, outcomes, leases, the deliveries
API, retention and recovery. ``delivery.manager`` (the worker's engine) and, on the request
side, ``domain.deliveries``, ``domain.recovery`` and ``domain.queue`` decide what to run and
with which values; the SQL is here, and only here.

Statements are built once, at import, with named bind parameters, never per call (building one
costs more than running it). Each is a ``Query``, compiled once per dialect
(``storage.statements``); one whose shape varies is a ``QueryShapes`` or a builder cached per
shape. A list is one parameter (``storage.lists``), so a statement's SQL is the same for any
length and the drivers reuse its prepared form. Row locks are written once, for PostgreSQL:
SQLite's compiler drops ``FOR UPDATE``, and its single writer (``BEGIN IMMEDIATE``) already
serializes the worker's transactions.

Lock order, on PostgreSQL: a transaction that may wait for row locks takes webhook rows first
(in id order), then delivery rows (in id order), then the rollup counters (in their key
order), as a webhook's PATCH or DELETE does (the row, then its deliveries). The recorder holds
its batch's webhooks before anything else for that (``RECORD``'s ``hooks``). A statement that
takes them another way never waits: the claims lock ``SKIP LOCKED``.

Where the backends need different statements (the claim, the recorder, the fan-out's writes),
both forms are here and ``storage.deliverystore`` runs each backend's.
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
        select(
            webhooks.c.id,
            webhooks.c.account_id,
            webhooks.c.events,
            webhooks.c.filter,
            webhooks.c.rate_limit.is_not(None).label("rate_limited"),
        )
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
# one execution per row: one execution per batch plans and starts the executor once. SQLite
# keeps ``execute_many`` (in process: no round trips).
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
STREAM_LOCK = Query(
    select(func.pg_advisory_xact_lock(literal_column(str(_STREAM_LOCK_KEY))).label("locked"))
)
LAST_STREAM_SEQ = Query(select(func.coalesce(func.max(events.c.stream_seq), 0).label("last")))
# Marked dispatched and numbered in one UPDATE: each is a new version of the (wide) event row
# with every index of ``events`` written again, so two UPDATEs were twice the work.
DISPATCHED_AS = Query(
    update(events)
    .where(events.c.id == bindparam("b_id"))
    .values(dispatched=True, stream_seq=bindparam("b_seq", type_=events.c.stream_seq.type))
)


# PostgreSQL: the numbers follow the highest one in the same statement; it runs after the
# lock's statement, so its snapshot sees every number committed before. ``LIMIT
# cardinality(:a_id)`` changes no result: it makes a cached generic plan count the ids as few,
# so it probes ``pk_events`` rather than reading the table.
_NUMBERING = (
    "UPDATE events SET dispatched = true, stream_seq = last.seq + numbered.n "
    "FROM (SELECT id, n FROM unnest(:a_id) WITH ORDINALITY AS numbered(id, n) "
    "LIMIT cardinality(:a_id)) AS numbered, "
    "(SELECT coalesce(max(stream_seq), 0) AS seq FROM events) AS last "
    "WHERE events.id = numbered.id"
)
_EVENT_IDS = bindparam("a_id", type_=postgresql.ARRAY(String()))
NUMBER_EVENTS = Query(text(_NUMBERING).bindparams(_EVENT_IDS))


# PostgreSQL: the fan-out's INSERT takes the stream's lock itself (one round trip fewer), as a
# one-row subquery joined to the rows (a volatile function: never pulled up); the numbering is
# a later statement, so its snapshot is taken after the lock. Names and a constant: no input.
INSERT_DELIVERIES = _unnest_insert(
    dlv, _DELIVERY_NAMES, f", (SELECT pg_advisory_xact_lock({_STREAM_LOCK_KEY})) AS stream"
)


# PostgreSQL: a dispatch round's first statement (``DISPATCH_LOOK``, built below from the same
# selects): ``UNDISPATCHED``, ``ACTIVE_WEBHOOKS`` of the accounts it found, and
# ``ANY_RATE_LIMITED_DUE``, which the round's claim then skips when it found nothing and no new
# delivery is a rate-limited webhook's. The kinds of its rows:
DISPATCH_EVENT = "e"
DISPATCH_WEBHOOK = "w"
DISPATCH_RATE_LIMITED_DUE = "r"


# -- claiming ---------------------------------------------------------------------------------


# A claim's row, from both forms of the claim.
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
CLAIMS_AS_STORED = _claims(*_STORED_JSON_COLUMNS)
"""``CLAIMS`` with the event's JSON as stored (``StoredJson``): on SQLite, not decoded for the
claim to be encoded again for the body."""


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
        webhooks.c.rate_limit.is_(None),  # claimed by their own window's rule
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


HOOKS_WITH_DUE_WORK = {flag: Query(_hooks_with_due_work(flag)) for flag in (False, True)}


@functools.lru_cache(maxsize=256)
def due_rows(hooks: int) -> Query:
    """Each of ``hooks`` webhooks' oldest claimable deliveries, up to its free slots, as claims
    (``CLAIMS_AS_STORED``' columns and ``next_attempt_at``) in one statement (parameters
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


# PostgreSQL: the same claim as ``SQLiteDeliveries.claim``'s statements, in one. Steps, as CTEs:
# the webhooks with due work and their free slots (``_hooks_with_due_work``), each one's oldest
# claimable rows locked SKIP LOCKED (``due_rows``, as a LATERAL join), the oldest ``limit`` of
# those leased (``LEASE``), and the claims read back (``CLAIMS``). The predicates repeat those
# of the Core statements above, so the partial indexes serve them. Concurrent workers take
# disjoint rows without waiting.
#
# A webhook's rows are picked by a row comparison, ``(webhook_id, next_attempt_at) BETWEEN
# (hook, -infinity) AND (hook, :now)``, not by ``webhook_id = hook``: with the equality,
# PostgreSQL drops ``webhook_id`` from the order and may walk ``ix_deliveries_due`` through
# every other webhook's backlog. Only ``ix_deliveries_webhook_due`` serves the comparison, so a
# webhook's probe reads its own rows whatever the others' backlogs.
#
# One text per worker (its ``per_endpoint``, a setting), not per round's ``limit``, so
# PostgreSQL runs a cached generic plan rather than planning nearly every claim.
# Names and a number only (``slots``, an int): no input reaches the text.
_POSTGRES_CLAIM = """
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
    -- The inner LIMIT is a constant (``postgres_claim``: per_endpoint, which ``room`` never
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


def postgres_claim(params: Params, *, numbering: bool = False) -> Query:
    """The PostgreSQL claim for ``params`` (``claim_params``): its text caps the rows of one
    webhook at ``per_endpoint``, a constant, so that the planner knows how few rows a webhook
    gives; one text per ``per_endpoint`` (a worker's setting), whatever the round's ``limit``,
    so its plan is cached. ``numbering``: the claim also marks the events ``a_id`` dispatched
    with the next stream numbers (``number_and_postgres_claim``)."""
    return _postgres_claim(int(params["per_endpoint"]), numbering)


# The numbering as a data-modifying CTE in front of the claim's: PostgreSQL runs it to the end
# whether or not the query reads it, with the claim's snapshot; the claim reads the events'
# type and data, which it does not change.
_NUMBERING_CTE = f"\nWITH dispatched AS ({_NUMBERING}), "


@functools.lru_cache(maxsize=16)
def _postgres_claim(slots: int, numbering: bool) -> Query:
    claim = _POSTGRES_CLAIM.format(slots=int(slots))
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
    # A scalar subquery (one index probe per rate-limited webhook), not EXISTS, which PostgreSQL
    # turns into a semi-join over every due delivery; a scalar subquery is never pulled up.
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
# LIMIT 1 as a constant, not a bind parameter: a generic plan takes a bound LIMIT for a tenth
# of the rows and is never preferred, so the look would be planned afresh on every call.
ANY_RATE_LIMITED_DUE = Query(_rate_limited_with_due_work(lock=False).limit(_ONE))


def _dispatch_look() -> CompoundSelect[Any]:
    """``DISPATCH_LOOK``: ``UNDISPATCHED``, ``ACTIVE_WEBHOOKS`` of the accounts it
    found and ``ANY_RATE_LIMITED_DUE``, the same selects with their locks, as CTEs of one
    statement (the first two MATERIALIZED, so each runs once and locks what it read)."""
    pending = _undispatched().cte("pending").prefix_with("MATERIALIZED")
    hooks = (
        _active_webhooks(webhooks.c.account_id.in_(select(pending.c.account_id)))
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


DISPATCH_LOOK = Query(_dispatch_look())
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

# SQLite's form of the recorder (``SQLiteDeliveries.record``; PostgreSQL's is ``RECORD``
# below), run under the single writer.
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
# transaction. It does what the SQLite form does in six (``SQLiteDeliveries.record``):
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
#            (C collation: Python's string order, the SQLite form's order) so
#            concurrent recorders never deadlock on them;
#   moved    each owned delivery's next state, once (a delivery twice in a batch, never by
#            design, moves by its first outcome, as one UPDATE per row would: the second finds
#            the lease released);
#   healed   the webhooks whose every stored attempt succeeded (``HEAL``);
# and returns one row per stored outcome: its ordinal ``n`` in the batch and, when its delivery
# just failed for good, the delivery (for ``delivery.exhausted``), else NULLs.
#
# ``locked`` reads each delivery in a LATERAL subquery of its own (one primary-key probe per
# id), not by ``id = ANY(:a_delivery_id)``: a pooled connection's cached generic plan costs
# ``= ANY`` of an array of unknown length at ten probes and, made on a young table, reads the
# whole table at every batch. ``LIMIT cardinality(..)`` changes no result: it makes the generic
# plan count the ids as few, so PostgreSQL keeps it instead of planning every run.
OUTCOME_ATTEMPT_NAMES: tuple[str, ...] = ("delivery_id", "webhook_id", "started_at")
OUTCOME_ATTEMPT_NAMES += ("duration_ms", "status_code", "error", "response_body", "succeeded")
OUTCOME_NAMES = (*OUTCOME_ATTEMPT_NAMES, "status", "next_attempt_at", "second", "rollup_status")
OUTCOME_NAMES += ("latency_bin",)
_RECORD_SQL = """
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
RECORD = Query(
    # HEAL's condition, spelled once; a constant: no input reaches the text.
    text(_RECORD_SQL.format(not_healthy=_NOT_HEALTHY))
    .bindparams(
        *array_params(delivery_attempts, OUTCOME_ATTEMPT_NAMES),
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
    """``RECORD``'s parameters: ``outcomes`` one tuple per attempt, its values in
    ``OUTCOME_NAMES``' order; ``rollup`` the counters' constants (``spans``, ``any_status``,
    ``any_latency``)."""
    columns = zip(*outcomes, strict=True)
    arrays = {
        f"a_{name}": list(values) for name, values in zip(OUTCOME_NAMES, columns, strict=True)
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

# The statements of recovery by filter are in ``storage.queries.replay``.
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


# PostgreSQL: the statistics of a young database (``PostgresDeliveries.analyze_if_young``). A table
# never analyzed has ``reltuples`` -1, and one analyzed has in ``relpages`` its pages then;
# autovacuum analyzes it only at its next look (``autovacuum_naptime``, a minute by default),
# and meanwhile each pooled connection's cached generic plans of the worker's statements are
# the ones made on the table as it was at the last ``ANALYZE`` (or before any). A table is
# young until analyzed, and again once it holds half as many pages again as then (an empty one
# is not: its plans read nothing).
YOUNG_TABLES = Query(
    text(
        "SELECT relname FROM pg_class "
        "WHERE oid IN ('deliveries'::regclass, 'events'::regclass) AND (reltuples < 0 "
        "OR pg_relation_size(oid) > 0 "
        "AND 2 * pg_relation_size(oid) >= 3 * relpages * current_setting('block_size')::bigint)"
    ).columns(relname=String())
)
"""The delivery tables (``deliveries``, ``events``) PostgreSQL never analyzed, or grown by half
since it last did."""
ANALYZE = Query(text("ANALYZE deliveries, events"))


def sqlite_worker_statements(hooks: int) -> list[Query]:
    """The statements a SQLite worker's rounds and recorder run (its claims of up to ``hooks``
    webhooks at once among them), for ``SQLiteDeliveries.ready`` to compile before the first
    round."""
    return [
        UNDISPATCHED,
        ACTIVE_WEBHOOKS,
        EVENT_BODIES,
        INSERT_DELIVERY,
        LAST_STREAM_SEQ,
        DISPATCHED_AS,
        RATE_LIMITED_TO_CLAIM,
        CLAIMS_AS_STORED,
        *HOOKS_WITH_DUE_WORK.values(),
        *(due_rows(count) for count in range(1, hooks + 1)),
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
