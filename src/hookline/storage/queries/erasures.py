"""The statements of contact erasure: the request's (``domain.erasures``) and the job's
(``delivery.erasure``). Events carry no column naming their object, so the job reads it from
each event's body: ``data.id`` (the contact, or the call) and ``data.contact_id`` (a call's)."""

from __future__ import annotations

from sqlalchemy import Integer, String, and_, bindparam, delete, func, null, or_, select, update

from hookline.storage.lists import in_list
from hookline.storage.models import (
    calls,
    contacts,
    deliveries,
    delivery_attempts,
    erasures,
    events,
    idempotency_keys,
    webhooks,
)
from hookline.storage.queries.common import of_account, owned
from hookline.storage.statements import Query

_NOW = bindparam("now", type_=erasures.c.created_at.type)

INSERT = Query(erasures.insert())
BY_ID = Query(select(erasures).where(*owned(erasures)))
"""The account's erasure ``id``."""
OF_CONTACT = Query(
    select(erasures)
    .where(of_account(erasures), erasures.c.contact_id == bindparam("contact_id"))
    .order_by(erasures.c.id)
    .limit(1)
)
"""The account's first erasure of contact ``contact_id``."""

CALLS_OF_CONTACT = Query(
    select(calls.c.id)
    .where(of_account(calls), calls.c.contact_id == bindparam("contact_id"))
    .order_by(calls.c.id)
)
DELETE_CONTACT = Query(delete(contacts).where(*owned(contacts)))

_OBJECT_ID = events.c.data["id"].as_string()
_CONTACT_ID = events.c.data["contact_id"].as_string()
EVENT_ABOUT_CONTACT = Query(
    select(events.c.id)
    .where(
        of_account(events),
        events.c.type.like("contact.%"),
        _OBJECT_ID == bindparam("contact_id", type_=String()),
    )
    .limit(1)
)
"""An event of the account about contact ``contact_id`` (one is enough: it existed)."""

# -- the job ----------------------------------------------------------------------------------

UNFINISHED = Query(
    select(erasures.c.id)
    .where(
        erasures.c.status != "done",
        or_(erasures.c.leased_until.is_(None), erasures.c.leased_until < _NOW),
    )
    .order_by(erasures.c.created_at)
    .limit(1)
)
"""The oldest unfinished erasure no live worker holds."""
TAKE = Query(
    update(erasures)
    .where(
        erasures.c.id == bindparam("b_id"),
        erasures.c.status != "done",
        or_(
            erasures.c.leased_until.is_(None),
            erasures.c.leased_until < _NOW,
            erasures.c.leased_by == bindparam("worker_id"),
        ),
    )
    .values(
        leased_by=bindparam("worker_id"),
        leased_until=bindparam("until", type_=erasures.c.leased_until.type),
        status="running",
    )
    .returning(*erasures.c)
)
"""Leases erasure ``b_id`` to ``worker_id`` until ``until`` and returns it; no row when another
worker holds it (or it is done). Every batch takes it again, in the batch's transaction."""
PROGRESS = Query(
    update(erasures)
    .where(erasures.c.id == bindparam("b_id"))
    .values(
        phase=bindparam("phase"),
        position=bindparam("position"),
        counts=bindparam("counts", type_=erasures.c.counts.type),
        received=bindparam("received", type_=erasures.c.received.type),
        notices=bindparam("notices", type_=erasures.c.notices.type),
        status=bindparam("status"),
        finished_at=bindparam("finished_at", type_=erasures.c.finished_at.type),
        leased_by=bindparam("leased_by", type_=String()),
        leased_until=bindparam("leased_until", type_=erasures.c.leased_until.type),
    )
)
"""The job's step, position and findings after a batch."""

SCRUB_CALLS = Query(
    update(calls)
    .where(of_account(calls), in_list(calls.c.id, "ids"))
    .values(
        contact_id=None,
        customer_phone_number="",
        metadata=null(),
        analysis=null(),
        updated_at=_NOW,
    )
)
"""Calls ``ids`` without what could name the person: number, metadata, transcript."""

EVENTS_AFTER = Query(
    select(events.c.id, events.c.type, _OBJECT_ID.label("object_id"), _CONTACT_ID.label("cid"))
    .where(of_account(events), events.c.id > bindparam("after"))
    .order_by(events.c.id)
    .limit(bindparam("limit", type_=Integer()))
)
"""A batch of the account's events after ``after``, with the ids their bodies name."""
RECEIVED = Query(
    select(deliveries.c.webhook_id, deliveries.c.event_id).where(
        in_list(deliveries.c.event_id, "ids")
    )
)
"""Which webhook got a delivery of which of the events ``ids``."""
DELIVERY_COUNT = Query(
    select(func.count()).select_from(deliveries).where(in_list(deliveries.c.event_id, "ids"))
)
ATTEMPT_COUNT = Query(
    select(func.count())
    .select_from(
        delivery_attempts.join(deliveries, deliveries.c.id == delivery_attempts.c.delivery_id)
    )
    .where(in_list(deliveries.c.event_id, "ids"))
)
DELETE_EVENTS = Query(delete(events).where(of_account(events), in_list(events.c.id, "ids")))
"""Events ``ids``, with their deliveries and attempts (ON DELETE CASCADE)."""

IDEMPOTENT_AFTER = Query(
    select(idempotency_keys.c.key, idempotency_keys.c.response_body)
    .where(of_account(idempotency_keys), idempotency_keys.c.key > bindparam("after"))
    .order_by(idempotency_keys.c.key)
    .limit(bindparam("limit", type_=Integer()))
)
DELETE_IDEMPOTENT = Query(
    delete(idempotency_keys).where(
        of_account(idempotency_keys), in_list(idempotency_keys.c.key, "keys")
    )
)

NOTICE_TARGETS = Query(
    select(webhooks.c.id, webhooks.c.events).where(
        of_account(webhooks), webhooks.c.is_active.is_(True)
    )
)
"""The account's active webhooks (the job picks those to tell)."""

NOTICE_STATES = Query(
    select(deliveries.c.webhook_id, deliveries.c.event_id, deliveries.c.status).where(
        and_(of_account(deliveries), in_list(deliveries.c.event_id, "ids"))
    )
)
"""The deliveries of the contact.erased events ``ids``: what each webhook acknowledged."""
