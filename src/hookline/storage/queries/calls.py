"""The statements of calls (``domain.calls``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, Select, bindparam, select, update

from hookline.storage.models import calls
from hookline.storage.queries.common import (
    column_values,
    newest_first,
    of_account,
    owned,
    this_row,
)
from hookline.storage.statements import Query, QueryShapes

INSERT = Query(calls.insert().returning(*calls.c))
"""A new call (every column), returned as stored."""

BY_ID = Query(select(calls).where(*owned(calls)))
BY_ID_FOR_UPDATE = Query(select(calls).where(*owned(calls)).with_for_update())

COMPLETION_COLUMNS = frozenset(
    {"call_status", "call_ended_at", "duration_seconds", "analysis", "assistant_id", "updated_at"}
)
COMPLETE = Query(
    update(calls)
    .where(this_row(calls))
    .values(column_values(calls, COMPLETION_COLUMNS))
    .returning(*calls.c)
)
"""Ends call ``b_id``: sets ``COMPLETION_COLUMNS``, returns the call."""

IN_PROGRESS = "in-progress"
_OVERDUE = (
    calls.c.call_status == IN_PROGRESS,
    calls.c.deadline_at < bindparam("now", type_=calls.c.deadline_at.type),
)
OVERDUE = Query(
    select(calls.c.id, calls.c.call_started_at, calls.c.deadline_at)
    .where(*_OVERDUE)
    .order_by(calls.c.deadline_at)
    .limit(bindparam("limit", type_=Integer()))
)
"""Up to ``limit`` calls still in progress past their deadline (``now``), the oldest first."""
TIME_OUT = Query(
    update(calls)
    .where(this_row(calls), *_OVERDUE)
    .values(column_values(calls, COMPLETION_COLUMNS - {"analysis", "assistant_id"}))
    .returning(*calls.c)
)
"""Ends call ``b_id`` only if it is still in progress past its deadline (``now``): of two
processes sweeping at once, one gets the row back, the other nothing."""
SET_ANALYSIS = Query(
    update(calls)
    .where(this_row(calls))
    .values(column_values(calls, {"analysis", "updated_at"}))
    .returning(*calls.c)
)
"""Sets call ``b_id``'s ``analysis``; returns the call."""

# The list's optional filters, each a column compared with a parameter of its name.
FILTERS = ("contact_id", "call_status", "call_type", "assistant_id")


@dataclass(frozen=True, slots=True)
class ListShape:
    """Which parts a calls list query has: ``filters`` (of ``FILTERS``), ``before_id``,
    ``offset``. Parameters: ``account_id``, ``limit`` and one per part."""

    filters: frozenset[str]
    before_id: bool
    offset: bool


def _list(shape: ListShape) -> Select[Any]:
    clauses = [of_account(calls)]
    clauses += [calls.c[name] == bindparam(name) for name in FILTERS if name in shape.filters]
    return newest_first(calls, clauses, before_id=shape.before_id, offset=shape.offset)


LIST = QueryShapes(_list)
"""``LIST.get(ListShape(...))``: a page of the account's calls, newest first."""
