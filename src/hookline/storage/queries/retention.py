"""The statements of per-account retention (``domain.retention``): accounts keeping less than
the server's maximum, and one batch of an account's expired rows. Expiry is an id bound: ids
are UUIDv7, so "made before the cutoff" is a range of the ``(account_id, id)`` index."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, select, true, update

from hookline.storage.lists import in_list
from hookline.storage.models import accounts, calls, events
from hookline.storage.statements import Query

SHORTER_WINDOWS = Query(
    select(accounts.c.id, accounts.c.retention_days).where(
        accounts.c.retention_days < bindparam("max_days")
    )
)
"""Accounts whose ``retention_days`` is below ``max_days`` (the server's)."""

EXPIRED_EVENTS = Query(
    select(events.c.id)
    .where(
        events.c.account_id == bindparam("account_id"),
        events.c.id < bindparam("before_id"),
        events.c.dispatched == true(),
    )
    .order_by(events.c.id)
    .limit(bindparam("limit"))
)
"""Up to ``limit`` of the account's dispatched events with an id below ``before_id``."""

DELETE_EVENTS = Query(
    delete(events).where(
        events.c.account_id == bindparam("account_id"), in_list(events.c.id, "ids")
    )
)
"""The account's events ``ids``; their deliveries and attempts go with them (ON DELETE
CASCADE)."""

TRANSCRIBED_CALLS = Query(
    select(calls.c.id, calls.c.analysis)
    .where(
        calls.c.account_id == bindparam("account_id"),
        calls.c.id < bindparam("before_id"),
        calls.c.analysis["transcript"].as_string().is_not(None),
    )
    .order_by(calls.c.id)
    .limit(bindparam("limit"))
)
"""Up to ``limit`` of the account's calls made before ``before_id`` that keep a transcript."""

SET_ANALYSIS = Query(
    update(calls)
    .where(calls.c.account_id == bindparam("account_id"), calls.c.id == bindparam("call_id"))
    .values(analysis=bindparam("analysis", type_=calls.c.analysis.type))
)
