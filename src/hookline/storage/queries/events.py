"""The API's reads of events (``domain.events``); the outbox row itself is written by
``storage.outbox``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, bindparam, select

from hookline.storage.models import events
from hookline.storage.queries.common import newest_first, of_account, owned
from hookline.storage.statements import Query, QueryShapes

BY_ID = Query(select(events).where(*owned(events)))


@dataclass(frozen=True, slots=True)
class ListShape:
    """Which parts an events list query has. Parameters: ``account_id``, ``since`` (the oldest
    ``created_at`` shown), ``limit`` and, with their parts, ``before_id``, ``type``,
    ``offset``."""

    before_id: bool
    type: bool
    offset: bool


def _list(shape: ListShape) -> Select[Any]:
    clauses = [of_account(events), events.c.created_at >= bindparam("since")]
    if shape.type:
        clauses.append(events.c.type == bindparam("type"))
    return newest_first(events, clauses, before_id=shape.before_id, offset=shape.offset)


LIST = QueryShapes(_list)
"""``LIST.get(ListShape(...))``: a page of the account's events, newest first."""
