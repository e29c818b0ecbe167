"""The statements of dashboard users (``dashboard.users``, ``mail``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, delete, exists, func, select, update

from hookline.storage.models import users
from hookline.storage.queries.common import of_account, owned, this_row
from hookline.storage.statements import Query

INSERT = Query(users.insert())
"""A new user (every column)."""

BY_EMAIL = Query(select(users).where(users.c.email == bindparam("email")))

SET_PASSWORD_HASH = Query(
    update(users)
    .where(this_row(users))
    .values(password_hash=bindparam("password_hash", type_=users.c.password_hash.type))
)
"""Replaces the password hash of user ``b_id``."""


def _members() -> Select[Any]:
    return select(users.c.id, users.c.email, users.c.created_at)


MEMBERS = Query(_members().where(of_account(users)).order_by(users.c.id))
"""The account's users (id, email, created_at), oldest first."""
MEMBER = Query(_members().where(*owned(users)))

EMAILS = Query(select(users.c.email).where(of_account(users)).order_by(users.c.id))
"""The e-mail address of each of the account's users, oldest first."""

_others = users.alias("others")
_remover = users.alias("remover")
DELETE_BY_MEMBER = Query(
    delete(users).where(
        *owned(users),
        users.c.id != bindparam("remover_id", type_=users.c.id.type),
        exists()
        .where(_remover.c.id == bindparam("remover_id", type_=users.c.id.type))
        .where(_remover.c.account_id == bindparam("account_id")),
        select(func.count())
        .select_from(_others)
        .where(_others.c.account_id == bindparam("account_id"))
        .scalar_subquery()
        > 1,
    )
)
"""Deletes user ``id`` of the account at the request of ``remover_id``, only while the remover
is still another member of it and the account keeps a member (their sessions go with them: ON
DELETE CASCADE). Run with the account's row locked (``accounts.LOCK``) so that two removals
of one account see each other's outcome on PostgreSQL."""
