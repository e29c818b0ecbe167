"""The statements of dashboard users (``dashboard.users``, ``mail``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, delete, select, update

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

DELETE = Query(delete(users).where(*owned(users)))
"""Deletes one of the account's users (their sessions go with them: ON DELETE CASCADE)."""
