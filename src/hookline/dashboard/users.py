"""Dashboard users: an email and an Argon2id password hash, each tied to one account."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from hookline import ids
from hookline.domain import keys
from hookline.domain.validation import normalize_email
from hookline.storage.models import users
from hookline.timeutil import utcnow

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024

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


def password_problem(password: str) -> str | None:
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"Use at least {MIN_PASSWORD_LENGTH} characters."
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"Use at most {MAX_PASSWORD_LENGTH} characters."
    return None


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


async def find_user(conn: AsyncConnection, email: str) -> User | None:
    row = (await conn.execute(select(users).where(users.c.email == email))).first()
    if row is None:
        return None
    return User(row.id, row.account_id, row.email, row.password_hash)


async def create_user_with_account(conn: AsyncConnection, email: str, password_hash: str) -> User:
    """Sign-up: a new account (the same as ``hookline accounts create``) and its first user."""
    account_id = await keys.create_account(conn, email)
    user = User(ids.uuid7(), account_id, email, password_hash)
    await conn.execute(
        users.insert().values(
            id=user.id,
            account_id=account_id,
            email=email,
            password_hash=password_hash,
            created_at=utcnow(),
        )
    )
    return user


async def replace_hash(conn: AsyncConnection, user_id: str, password_hash: str) -> None:
    await conn.execute(
        update(users).where(users.c.id == user_id).values(password_hash=password_hash)
    )
