"""The statements of the dashboard's throttles (``dashboard.throttle``): one row per counted
attempt, holding digests of the address and the e-mail."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Integer, Select, bindparam, delete, select

from hookline.storage.models import auth_attempts
from hookline.storage.statements import Query, QueryShapes

INSERT = Query(
    auth_attempts.insert().returning(auth_attempts.c.id),
    column_keys=["scope", "address_key", "email_key", "created_at"],
)
"""A new attempt; returns its id (row ids start at 1)."""

DELETE = Query(delete(auth_attempts).where(auth_attempts.c.id == bindparam("id")))
DELETE_OLDER = Query(delete(auth_attempts).where(auth_attempts.c.created_at < bindparam("before")))

_OF_SCOPE = auth_attempts.c.scope == bindparam("scope")
_BY_ADDRESS = auth_attempts.c.address_key == bindparam("address_key")
_BY_EMAIL = auth_attempts.c.email_key == bindparam("email_key")
# The pair's e-mail is never NULL: only log-ins count by pair, and they always name one.
_PAIR = (_OF_SCOPE, _BY_ADDRESS, _BY_EMAIL)
_NOT_THIS = auth_attempts.c.id != bindparam("id")

DELETE_PAIR = Query(delete(auth_attempts).where(*_PAIR))
"""Every attempt of this ``scope`` from ``address_key`` for ``email_key``."""

PAIR_SINCE = Query(
    select(auth_attempts.c.id)
    .where(*_PAIR, _NOT_THIS, auth_attempts.c.created_at > bindparam("since"))
    .limit(1)
)
"""Another attempt (not ``id``) of the pair since ``since``, if any."""


def _nth_newest(shape: tuple[bool, bool]) -> Select[Any]:
    by_address, by_email = shape
    conditions: list[ColumnElement[bool]] = [
        _OF_SCOPE,
        _NOT_THIS,
        auth_attempts.c.created_at > bindparam("since"),
    ]
    if by_address:
        conditions.append(_BY_ADDRESS)
    if by_email:
        conditions.append(_BY_EMAIL)
    return (
        select(auth_attempts.c.created_at)
        .where(*conditions)
        .order_by(auth_attempts.c.created_at.desc())
        .offset(bindparam("skip", type_=Integer()))
        .limit(1)
    )


NTH_NEWEST = QueryShapes(_nth_newest)
"""``NTH_NEWEST.get((by_address, by_email))``: when the attempt ``skip + 1`` places from the
newest of this ``scope`` since ``since`` (not ``id``; from ``address_key`` and/or for
``email_key``) was made."""
