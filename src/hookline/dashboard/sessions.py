"""Dashboard sessions: a random cookie; the database keeps only its SHA-256 (as API keys).

Each session row carries its CSRF token, so a stolen database can't be used to forge cookies,
and logging out (deleting the row) ends the session everywhere at once.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from fastapi import Depends, Request, Response

from hookline.dashboard.web import PREFIX, LoginRequired
from hookline.storage.connector import Connection
from hookline.storage.db import Database, fetch_one
from hookline.storage.queries import sessions as queries
from hookline.timeutil import utcnow

SESSION_COOKIE = "hl_session"
SESSION_LIFETIME = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class DashboardSession:
    id: str
    user_id: str
    account_id: str
    email: str
    csrf_token: str


def _hash(cookie_value: str) -> str:
    return hashlib.sha256(cookie_value.encode()).hexdigest()


async def create_session(conn: Connection, user_id: str) -> str:
    """A new session for ``user_id``; returns the cookie value (never stored)."""
    cookie_value = secrets.token_urlsafe(32)
    now = utcnow()
    # Expired rows of anyone are swept here: logins are rare, so this costs nothing noticeable.
    await conn.execute(queries.DELETE_EXPIRED, {"now": now})
    row = {
        "id": _hash(cookie_value),
        "user_id": user_id,
        "csrf_token": secrets.token_urlsafe(32),
        "created_at": now,
        "expires_at": now + SESSION_LIFETIME,
    }
    await conn.execute(queries.INSERT, row)
    return cookie_value


async def load_session(conn: Connection, cookie_value: str) -> DashboardSession | None:
    row = await fetch_one(conn, queries.LIVE, {"id": _hash(cookie_value), "now": utcnow()})
    if row is None:
        return None
    return DashboardSession(row.id, row.user_id, row.account_id, row.email, row.csrf_token)


async def end_session(conn: Connection, session_id: str) -> None:
    await conn.execute(queries.DELETE, {"id": session_id})


def set_session_cookie(request: Request, response: Response, cookie_value: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        cookie_value,
        max_age=int(SESSION_LIFETIME.total_seconds()),
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=request.app.state.settings.secure_cookies,
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path=PREFIX)


async def optional_session(request: Request) -> DashboardSession | None:
    """The signed-in session, or None; also exposes it and its CSRF token to templates."""
    cookie_value = request.cookies.get(SESSION_COOKIE)
    if not cookie_value:
        return None
    db: Database = request.app.state.db
    async with db.read() as conn:
        session = await load_session(conn, cookie_value)
    if session is not None:
        request.state.dashboard_session = session
        request.state.csrf_token = session.csrf_token
        request.state.account_id = session.account_id  # for the access log
    return session


async def require_session(request: Request) -> DashboardSession:
    session = await optional_session(request)
    if session is None:
        raise LoginRequired
    return session


CurrentSession = Annotated[DashboardSession, Depends(require_session)]
