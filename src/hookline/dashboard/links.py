"""One-time links for people: invitations to an account (24 h) and password resets (1 h).

The link carries 256 random bits; the database keeps only their SHA-256, so a copy of the
database opens nobody's account. A link works once: using it deletes it (and every other link of
the same kind for the same e-mail and account), in the transaction that sets the password.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from hookline.dashboard.web import PREFIX
from hookline.settings import Settings
from hookline.storage.connector import Connection
from hookline.storage.db import fetch_one
from hookline.storage.queries import login_tokens as queries
from hookline.timeutil import utcnow

INVITE = "invite"
RESET = "reset"
LIFETIMES = {INVITE: timedelta(hours=24), RESET: timedelta(hours=1)}
# The dashboard path of each kind of link; the token follows it (logs.SECRET_SEGMENTS keeps it out
# of the logs).
PATHS = {INVITE: f"{PREFIX}/join/", RESET: f"{PREFIX}/reset/"}
# What a token looks like (secrets.token_urlsafe(32)); anything else is not looked up.
_TOKEN_LENGTH = 43
_TOKEN_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """Whom a link is for."""

    purpose: str
    account_id: str
    email: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class PendingInvitation:
    email: str
    expires_at: datetime


def has_token_shape(value: str) -> bool:
    """Whether ``value`` looks like a token of ours (``secrets.token_urlsafe(32)``)."""
    return len(value) == _TOKEN_LENGTH and _TOKEN_ALPHABET.issuperset(value)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def validity(purpose: str) -> str:
    """How long a new link of ``purpose`` works, for people: ``24 hours``, ``1 hour``."""
    hours = int(LIFETIMES[purpose].total_seconds() // 3600)
    return f"{hours} hour{'s' if hours != 1 else ''}"


def url_for(settings: Settings, purpose: str, token: str) -> str:
    """The absolute link, on ``HOOKLINE_PUBLIC_URL`` (never on a request's Host header)."""
    return f"{settings.public_url}{PATHS[purpose]}{token}"


async def issue(conn: Connection, purpose: str, account_id: str, email: str) -> str:
    """A new link's token for ``email``; earlier links of this kind for it stop working."""
    now = utcnow()
    await conn.execute(queries.DELETE_EXPIRED, {"now": now})
    await _forget(conn, purpose, account_id, email)
    token = secrets.token_urlsafe(32)
    row = {
        "id": _hash(token),
        "purpose": purpose,
        "account_id": account_id,
        "email": email,
        "created_at": now,
        "expires_at": now + LIFETIMES[purpose],
    }
    await conn.execute(queries.INSERT, row)
    return token


async def look_up(conn: Connection, purpose: str, token: str) -> LinkTarget | None:
    """Whom a live link is for, or None (unknown, used, expired, or another kind of link)."""
    if not has_token_shape(token):
        return None
    params = {"id": _hash(token), "purpose": purpose, "now": utcnow()}
    row = await fetch_one(conn, queries.LIVE, params)
    if row is None:
        return None
    return LinkTarget(row.purpose, row.account_id, row.email, row.expires_at)


async def use(conn: Connection, purpose: str, token: str) -> LinkTarget | None:
    """Like :func:`look_up`, and the link (with its siblings) is gone when ``conn`` commits.

    The DELETE's row count decides between two concurrent uses of one link: only one removes it.
    """
    target = await look_up(conn, purpose, token)
    if target is None:
        return None
    result = await conn.execute(queries.DELETE, {"id": _hash(token)})
    if result.rowcount != 1:
        return None
    await _forget(conn, purpose, target.account_id, target.email)
    return target


async def pending_invitations(conn: Connection, account_id: str) -> list[PendingInvitation]:
    params = {"account_id": account_id, "purpose": INVITE, "now": utcnow()}
    rows = await conn.execute(queries.PENDING, params)
    return [PendingInvitation(row.email, row.expires_at) for row in rows]


async def cancel_invitation(conn: Connection, account_id: str, email: str) -> None:
    await _forget(conn, INVITE, account_id, email)


async def _forget(conn: Connection, purpose: str, account_id: str, email: str) -> None:
    params = {"purpose": purpose, "account_id": account_id, "email": email}
    await conn.execute(queries.FORGET, params)
