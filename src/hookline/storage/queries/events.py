"""The API's reads of events (``domain.events``); the outbox row itself is written by
``storage.outbox``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, bindparam, select

from hookline.storage.lists import in_list
from hookline.storage.models import events
from hookline.storage.queries.common import newest_first, of_account, owned
from hookline.storage.queries.replay import about_object
from hookline.storage.statements import Query, QueryShapes

BY_ID = Query(select(events).where(*owned(events)))
"""The account's event ``id``."""
BY_ID_OF_TYPES = Query(select(events).where(*owned(events), in_list(events.c.type, "types")))
"""The account's event ``id`` if its type is in ``types`` (a list parameter: the types the key
may read)."""


@dataclass(frozen=True, slots=True)
class ListShape:
    """Which parts an events list query has. Parameters: ``account_id``, ``since`` (the oldest
    ``created_at`` shown), ``limit`` and, with their parts, ``before_id``, ``type``,
    ``offset``, ``types`` (a list parameter: the types the key may read), ``object_id`` (the
    contact or call the event is about: ``replay.about_object``), ``until``."""

    before_id: bool
    type: bool
    offset: bool
    types: bool = False
    object_id: bool = False
    until: bool = False


def _list(shape: ListShape) -> Select[Any]:
    clauses = [of_account(events), events.c.created_at >= bindparam("since")]
    if shape.until:
        clauses.append(events.c.created_at <= bindparam("until"))
    if shape.object_id:
        clauses.append(about_object())
    if shape.type:
        clauses.append(events.c.type == bindparam("type"))
    if shape.types:
        clauses.append(in_list(events.c.type, "types"))
    return newest_first(events, clauses, before_id=shape.before_id, offset=shape.offset)


LIST = QueryShapes(_list)
"""``LIST.get(ListShape(...))``: a page of the account's events, newest first."""
