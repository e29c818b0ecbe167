"""Calls: reported by the telephony side; start and completion each fire an event in the same
transaction (see ``events.record_event``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hookline import ids
from hookline.domain.call_schemas import validated_outcome
from hookline.domain.contacts import contact_to_call
from hookline.domain.events import record_event
from hookline.errors import Conflict, ValidationFailed
from hookline.storage.db import Connection, Database, fetch_one
from hookline.storage.queries import accounts as account_queries
from hookline.storage.queries import calls as queries
from hookline.timeutil import iso, to_millis, utcnow

IN_PROGRESS = queries.IN_PROGRESS
TIMED_OUT = "timed-out"
"""The status of a call the server ended: still in progress at its deadline."""
SWEEP_BATCH = 100
#: The longest call recorded: its end at most this long after its start, so that
#: ``duration_seconds`` is a sane length that fits every database's integer column.
MAX_CALL_DURATION = timedelta(days=7)
ANALYSIS_FIELDS = (
    "assistant_id",
    "transcript",
    "summary",
    "recording_url",
    "intent",
    "lead_qualification",
    "appointment_booked",
    "cost",
    "outcome",
    "outcome_schema_version",
)


def analysis_out(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """Every field of the analysis, ``null`` where not reported; None when there is none."""
    if stored is None:
        return None
    return {name: stored.get(name) for name in ANALYSIS_FIELDS}


def call_out(row: Any) -> dict[str, Any]:
    """The call object exactly as the API returns it and events carry it."""
    return {
        "id": row.id,
        "contact_id": row.contact_id,
        "call_type": row.call_type,
        "customer_phone_number": row.customer_phone_number,
        "call_status": row.call_status,
        "call_started_at": iso(row.call_started_at),
        "call_ended_at": iso(row.call_ended_at),
        "duration_seconds": row.duration_seconds,
        "metadata": row.metadata,
        "analysis": analysis_out(row.analysis),
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }


async def create_call(conn: Connection, account_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Start a call (``fields`` already validated by ``CallCreate``); fires ``call.started``."""
    now = utcnow()
    phone = fields["customer_phone_number"]
    started_at = fields.get("call_started_at")
    started = to_millis(started_at) if started_at is not None else now
    contact_id = await contact_to_call(conn, account_id, fields.get("contact_id"), phone)
    max_seconds = await conn.scalar(account_queries.MAX_CALL_SECONDS, {"account_id": account_id})
    row = {
        "id": ids.call_id(),
        "account_id": account_id,
        "contact_id": contact_id,
        "call_type": fields["call_type"],
        "customer_phone_number": phone,
        "call_status": IN_PROGRESS,
        "call_started_at": started,
        "call_ended_at": None,
        "duration_seconds": None,
        "metadata": fields.get("metadata"),
        "analysis": None,
        "assistant_id": None,
        "created_at": now,
        "updated_at": now,
        "deadline_at": started + timedelta(seconds=max_seconds),
    }
    inserted = (await conn.execute(queries.INSERT, row)).one()
    call = call_out(inserted)
    await record_event(conn, account_id, "call.started", call)
    return call


async def get_call(conn: Connection, account_id: str, call_id: str) -> dict[str, Any] | None:
    row = await fetch_one(conn, queries.BY_ID, {"id": call_id, "account_id": account_id})
    return call_out(row) if row is not None else None


@dataclass(frozen=True, slots=True)
class CallFilters:
    contact_id: str | None = None
    call_status: str | None = None
    call_type: str | None = None
    assistant_id: str | None = None


async def list_calls(
    conn: Connection,
    account_id: str,
    filters: CallFilters,
    *,
    limit: int,
    before_id: str | None = None,
    offset: int | None = None,
) -> list[dict[str, Any]]:
    """Newest first (ids are UUIDv7); ask ``limit + 1`` to see whether a next page exists."""
    given = {name: getattr(filters, name) for name in queries.FILTERS}
    given = {name: value for name, value in given.items() if value is not None}
    shape = queries.ListShape(frozenset(given), before_id is not None, bool(offset))
    params = {
        **given,
        "account_id": account_id,
        "before_id": before_id,
        "limit": limit,
        "offset": offset,
    }
    return [call_out(r) for r in await conn.execute(queries.LIST.get(shape), params)]


def _ended_at(started: datetime, requested: datetime | None, now: datetime) -> datetime:
    # A start reported slightly in the future (clock skew) must not give a negative length.
    ended = max(now, started) if requested is None else to_millis(requested)
    if ended < started:
        raise ValidationFailed.for_field(
            "call_ended_at", "call_ended_at must not be before call_started_at"
        )
    if ended - started > MAX_CALL_DURATION:
        raise ValidationFailed.for_field(
            "call_ended_at",
            f"call_ended_at (default now) must be at most {MAX_CALL_DURATION.days} days "
            "after call_started_at",
        )
    return ended


async def complete_call(
    conn: Connection,
    account_id: str,
    call_id: str,
    call_status: str,
    call_ended_at: datetime | None = None,
    analysis: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """End an in-progress call; fires ``call.completed``, and with it ``lead.qualified`` and
    ``appointment.booked`` when ``analysis`` says so. None when the call doesn't exist;
    ``Conflict`` when it already ended."""
    row = await fetch_one(conn, queries.BY_ID_FOR_UPDATE, {"id": call_id, "account_id": account_id})
    if row is None:
        return None
    if row.call_status != IN_PROGRESS:
        raise Conflict(f"Call {call_id} already ended with call_status {row.call_status}.")
    if analysis is not None and analysis.get("outcome") is not None:
        analysis = {
            **analysis,
            **await validated_outcome(conn, account_id, analysis["outcome"], "analysis.outcome"),
        }
    now = utcnow()
    ended = _ended_at(row.call_started_at, call_ended_at, now)
    changes = {
        "call_status": call_status,
        "call_ended_at": ended,
        "duration_seconds": math.floor((ended - row.call_started_at).total_seconds()),
        "analysis": analysis,
        "assistant_id": analysis.get("assistant_id") if analysis is not None else None,
        "updated_at": now,
    }
    updated = (await conn.execute(queries.COMPLETE, {**changes, "b_id": call_id})).one()
    call = call_out(updated)
    for event_type in ("call.completed", *_outcome_events(analysis)):
        await record_event(conn, account_id, event_type, call)
    return call


async def analyze_call(
    conn: Connection, account_id: str, call_id: str, outcome: dict[str, Any]
) -> dict[str, Any] | None:
    """Record the structured outcome of a call that ended (validated against the account's
    schema); fires ``call.analyzed``. None when the call doesn't exist; ``Conflict`` while it
    is in progress, when the server ended it, or when it has an outcome already."""
    row = await fetch_one(conn, queries.BY_ID_FOR_UPDATE, {"id": call_id, "account_id": account_id})
    if row is None:
        return None
    if row.call_status in (IN_PROGRESS, TIMED_OUT):
        why = (
            "is still in progress" if row.call_status == IN_PROGRESS else "was ended by the server"
        )
        raise Conflict(f"Call {call_id} {why}; only a call its caller ended takes an analysis.")
    stored = row.analysis or {}
    if stored.get("outcome") is not None:
        raise Conflict(f"Call {call_id} has its outcome already; it is recorded once.")
    fields = await validated_outcome(conn, account_id, outcome, "")
    analysis = {**{name: None for name in ANALYSIS_FIELDS}, **stored, **fields}
    changes = {"analysis": analysis, "updated_at": utcnow(), "b_id": call_id}
    call = call_out((await conn.execute(queries.SET_ANALYSIS, changes)).one())
    await record_event(conn, account_id, "call.analyzed", call)
    return call


async def end_overdue_calls(conn: Connection, now: datetime, limit: int = SWEEP_BATCH) -> int:
    """End up to ``limit`` calls still in progress past their deadline, as ``timed-out`` at
    that deadline, each with its ``call.completed`` in this transaction. The UPDATE ends a
    call only if it is still in progress, so of several sweepers only one ends each call."""
    ended = 0
    for candidate in await conn.execute(queries.OVERDUE, {"now": now, "limit": limit}):
        row = await fetch_one(conn, queries.TIME_OUT, _timed_out(candidate, now))
        if row is None:
            continue  # completed or swept by someone else meanwhile
        await record_event(conn, row.account_id, "call.completed", call_out(row))
        ended += 1
    return ended


def _timed_out(candidate: Any, now: datetime) -> dict[str, Any]:
    started, deadline = candidate.call_started_at, candidate.deadline_at
    return {
        "b_id": candidate.id,
        "now": now,
        "call_status": TIMED_OUT,
        "call_ended_at": deadline,
        "duration_seconds": math.floor((deadline - started).total_seconds()),
        "updated_at": now,
    }


async def sweep_overdue_calls(db: Database) -> int:
    """End every overdue call, a batch per transaction (the worker's periodic chore)."""
    total = 0
    while True:
        async with db.begin() as conn:
            ended = await end_overdue_calls(conn, utcnow())
        total += ended
        if ended < SWEEP_BATCH:
            return total


def _outcome_events(analysis: dict[str, Any] | None) -> list[str]:
    """The events an analysis fires besides ``call.completed``, in a fixed order."""
    if analysis is None:
        return []
    fired = []
    if analysis.get("lead_qualification") == "qualified":
        fired.append("lead.qualified")
    if analysis.get("appointment_booked") is True:
        fired.append("appointment.booked")
    if analysis.get("outcome") is not None:
        fired.append("call.analyzed")
    return fired
