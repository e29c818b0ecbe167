"""The statements of dashboard sessions (``dashboard.sessions``, ``dashboard.users``)."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, select

from hookline.storage.models import dashboard_sessions, users
from hookline.storage.statements import Query

INSERT = Query(dashboard_sessions.insert())
"""A new session (every column)."""

LIVE = Query(
    select(
        dashboard_sessions.c.id,
        dashboard_sessions.c.csrf_token,
        users.c.id.label("user_id"),
        users.c.account_id,
        users.c.email,
    )
    .join(users, users.c.id == dashboard_sessions.c.user_id)
    .where(
        dashboard_sessions.c.id == bindparam("id"),
        dashboard_sessions.c.expires_at > bindparam("now"),
    )
)
"""Session ``id`` (the cookie's hash) with its user, unless it had expired at ``now``."""

DELETE = Query(delete(dashboard_sessions).where(dashboard_sessions.c.id == bindparam("id")))
DELETE_OF_USER = Query(
    delete(dashboard_sessions).where(dashboard_sessions.c.user_id == bindparam("user_id"))
)
DELETE_EXPIRED = Query(
    delete(dashboard_sessions).where(dashboard_sessions.c.expires_at < bindparam("now"))
)
"""Every session (of anyone) expired before ``now``."""
