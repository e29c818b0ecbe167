"""The statements of recovery and replay by filter (``domain.recovery``): a webhook's
deliveries of a window by status, event type and object, and the events it never got.

Events carry no column naming their object, so the object is read from the body: ``data.id``
(the contact, or the call) or ``data.contact_id`` (a call's contact)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    String,
    bindparam,
    func,
    literal_column,
    or_,
    select,
    true,
    update,
)

from hookline.storage.lists import in_list
from hookline.storage.models import deliveries as dlv
from hookline.storage.models import events
from hookline.storage.statements import Query, QueryShapes

_SINCE = bindparam("since", type_=events.c.created_at.type)
_UNTIL = bindparam("until", type_=events.c.created_at.type)
_NOW = bindparam("now", type_=dlv.c.next_attempt_at.type)


def about_object() -> ColumnElement[bool]:
    """The event is about ``object_id``: the contact or call its body carries, or a call's
    contact."""
    wanted = bindparam("object_id", type_=String())
    return or_(
        events.c.data["id"].as_string() == wanted,
        events.c.data["contact_id"].as_string() == wanted,
    )


@dataclass(frozen=True, slots=True)
class Shape:
    """Which optional filters a statement has: ``types`` (a list parameter of event types) and
    ``object_id``."""

    types: bool
    object_id: bool


def _narrowed(clauses: list[ColumnElement[bool]], shape: Shape) -> list[ColumnElement[bool]]:
    if shape.types:
        clauses.append(in_list(events.c.type, "types"))
    if shape.object_id:
        clauses.append(about_object())
    return clauses


def _deliveries(shape: Shape) -> Any:
    """The webhook's deliveries whose status is in ``statuses``, of events in the window."""
    clauses = [
        dlv.c.webhook_id == bindparam("webhook_id"),
        in_list(dlv.c.status, "statuses"),
        events.c.created_at >= _SINCE,
        events.c.created_at <= _UNTIL,
    ]
    return (
        select(dlv.c.id)
        .select_from(dlv.join(events, events.c.id == dlv.c.event_id))
        .where(*_narrowed(clauses, shape))
    )


def _missed(shape: Shape) -> Any:
    """The window's events of ``types`` with no delivery to the webhook (the candidates; the
    fan-out's rule decides which it gets)."""
    clauses = [
        events.c.account_id == bindparam("account_id"),
        events.c.id >= bindparam("id_from"),
        events.c.created_at >= _SINCE,
        events.c.created_at <= _UNTIL,
        events.c.dispatched == true(),  # undispatched ones are the fan-out's
        events.c.target_webhook_id.is_(None),
        in_list(events.c.type, "types"),
        ~select(dlv.c.id)
        .where(dlv.c.event_id == events.c.id, dlv.c.webhook_id == bindparam("webhook_id"))
        .exists(),
    ]
    if shape.object_id:
        clauses.append(about_object())
    return select(
        events.c.id,
        events.c.account_id,
        events.c.type,
        events.c.created_at,
        events.c.target_webhook_id,
        events.c.about_webhook_id,
    ).where(*clauses)


def _batch(query: Any, key: Any) -> Any:
    return query.where(key > bindparam("after")).order_by(key).limit(bindparam("limit"))


DELIVERIES_BATCH = QueryShapes(lambda shape: _batch(_deliveries(shape), dlv.c.id))
"""``DELIVERIES_BATCH.get(Shape(...))``: the next ``limit`` ids after ``after``."""
DELIVERIES_COUNT = QueryShapes(
    lambda shape: select(func.count().label("n")).select_from(_deliveries(shape).subquery())
)
MISSED_BATCH = QueryShapes(lambda shape: _batch(_missed(shape), events.c.id))
SCHEDULE_AGAIN = Query(
    update(dlv)
    .where(in_list(dlv.c.id, "ids"), in_list(dlv.c.status, "statuses"))
    .values(
        status=literal_column("'pending'"),
        next_attempt_at=_NOW,
        leased_by=None,
        leased_until=None,
        updated_at=_NOW,
    )
)
"""Deliveries ``ids`` still in one of ``statuses``, due now (a new attempt of each)."""
