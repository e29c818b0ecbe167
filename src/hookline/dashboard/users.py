"""Dashboard users: an email and an Argon2id password hash, each tied to one account."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from zxcvbn import zxcvbn

from hookline import ids
from hookline.domain import keys
from hookline.domain.validation import normalize_email
from hookline.storage.connector import Connection
from hookline.storage.db import fetch_one
from hookline.storage.queries import accounts as account_queries
from hookline.storage.queries import sessions as session_queries
from hookline.storage.queries import users as queries
from hookline.timeutil import utcnow

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024
# zxcvbn's score: 3 is "safely unguessable: moderate protection from offline slow-hash attacks".
MIN_PASSWORD_SCORE = 3
ZXCVBN_MAX_LENGTH = 72

# argon2-cffi's defaults are Argon2id with RFC 9106's "low memory" parameters.
_hasher = PasswordHasher()


@dataclass(frozen=True, slots=True)
class User:
    id: str
    account_id: str
    email: str
    password_hash: str


def canonical_email(raw: str) -> str:
    """The form the email is stored and looked up in; raises ValueError with a message."""
    return normalize_email(raw).lower()


async def password_problem(password: str, email: str = "") -> str | None:
    """Why ``password`` is refused, as advice for the person typing it; None when it will do."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"Use at least {MIN_PASSWORD_LENGTH} characters."
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"Use at most {MAX_PASSWORD_LENGTH} characters."
    # zxcvbn takes up to ~40 ms of CPU on a long repetitive password: off the event loop.
    return await asyncio.to_thread(_guessability_problem, password, email)


def _guessability_problem(password: str, email: str) -> str | None:
    # zxcvbn refuses more than 72 characters (its cost grows fast with length); a password whose
    # first 72 are hard to guess is hard to guess.
    local_part = email.partition("@")[0]
    own_words = [
        "hookline",
        email,
        local_part,
        re.sub(r"[._+-]", "", local_part),
        *re.split(r"[@._+-]+", email),
    ]
    result = zxcvbn(password[:ZXCVBN_MAX_LENGTH], user_inputs=[w for w in own_words if w])
    if result["score"] >= MIN_PASSWORD_SCORE:
        return None
    feedback = result["feedback"]
    advice = [feedback["warning"], *feedback["suggestions"]]
    details = " ".join(part if part.endswith(".") else f"{part}." for part in advice if part)
    return (
        "This password is too easy to guess. "
        + (details + " " if details else "")
        + "A few unrelated words, or a password manager's suggestion, will do."
    )


async def hash_password(password: str) -> str:
    # Argon2 deliberately burns ~0.1 s of CPU: keep it off the event loop.
    return await asyncio.to_thread(_hasher.hash, password)


@cache
def _dummy_hash() -> str:
    return _hasher.hash("no user has this password; it only costs the same time")


async def verify_password(password_hash: str | None, password: str) -> bool:
    """Verifies against a dummy hash when there is no user, so both cases take the same time."""
    stored = password_hash if password_hash is not None else _dummy_hash()

    def check() -> bool:
        try:
            return _hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False

    matches = await asyncio.to_thread(check)
    return matches and password_hash is not None


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)


async def find_user(conn: Connection, email: str) -> User | None:
    row = await fetch_one(conn, queries.BY_EMAIL, {"email": email})
    if row is None:
        return None
    return User(row.id, row.account_id, row.email, row.password_hash)


async def create_user_with_account(conn: Connection, email: str, password_hash: str) -> User:
    """Sign-up: a new account (the same as ``hookline accounts create``) and its first user."""
    account_id = await keys.create_account(conn, email)
    return await create_user(conn, account_id, email, password_hash)


async def create_user(conn: Connection, account_id: str, email: str, password_hash: str) -> User:
    """Another user of an existing account (an accepted invitation)."""
    user = User(ids.uuid7(), account_id, email, password_hash)
    row = {
        "id": user.id,
        "account_id": account_id,
        "email": email,
        "password_hash": password_hash,
        "created_at": utcnow(),
    }
    await conn.execute(queries.INSERT, row)
    return user


async def replace_hash(conn: Connection, user_id: str, password_hash: str) -> None:
    await conn.execute(queries.SET_PASSWORD_HASH, {"b_id": user_id, "password_hash": password_hash})


async def replace_password(conn: Connection, user_id: str, password_hash: str) -> None:
    """A new password (a reset): every session of the user ends, wherever it was opened."""
    await replace_hash(conn, user_id, password_hash)
    await conn.execute(session_queries.DELETE_OF_USER, {"user_id": user_id})


@dataclass(frozen=True, slots=True)
class Member:
    id: str
    email: str
    created_at: datetime


async def list_users(conn: Connection, account_id: str) -> list[Member]:
    rows = await conn.execute(queries.MEMBERS, {"account_id": account_id})
    return [Member(row.id, row.email, row.created_at) for row in rows]


class RemovalRefused(Exception):
    """The removal would leave the account without a member, or the remover is no longer one."""


async def remove_user(conn: Connection, account_id: str, user_id: str, remover_id: str) -> bool:
    """``remover_id`` removes another user of ``account_id`` (their sessions go with them);
    False if there is no such other user. Raises :class:`RemovalRefused` when the remover has
    left the account meanwhile or the account would have no member left.

    The rule lives in the DELETE itself, under the account's row lock: two members removing
    each other at once leave one of them, on either database.
    """
    await conn.execute(account_queries.LOCK, {"account_id": account_id})
    params = {"id": user_id, "account_id": account_id, "remover_id": remover_id}
    result = await conn.execute(queries.DELETE_BY_MEMBER, params)
    if result.rowcount == 1:
        return True
    if user_id == remover_id or await find_member(conn, account_id, user_id) is None:
        return False
    raise RemovalRefused(user_id)


async def find_member(conn: Connection, account_id: str, user_id: str) -> Member | None:
    row = await fetch_one(conn, queries.MEMBER, {"id": user_id, "account_id": account_id})
    return None if row is None else Member(row.id, row.email, row.created_at)
