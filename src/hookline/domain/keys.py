"""API keys: ``hl_live_<32 base62><6 base62 checksum>``; only a SHA-256 of the key is stored.

The checksum (CRC32 of the random part) lets a mistyped key be refused without a database look-up.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hookline import ids
from hookline.storage.db import Connection, Database, fetch_one
from hookline.storage.queries import accounts as account_queries
from hookline.storage.queries import keys as queries
from hookline.timeutil import iso, utcnow

KEY_PREFIX = "hl_live_"
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_RANDOM_LENGTH = 32
_CHECKSUM_LENGTH = 6
KEY_LENGTH = len(KEY_PREFIX) + _RANDOM_LENGTH + _CHECKSUM_LENGTH
DISPLAY_PREFIX_LENGTH = len(KEY_PREFIX) + 6

SCOPES = (
    "contacts:read",
    "contacts:write",
    "calls:read",
    "calls:write",
    "webhooks:read",
    "webhooks:write",
)


# Base62 two digits at a time: every request checks its key's checksum, so the CRC is spelled
# by three look-ups in this table of the 3,844 pairs instead of digit by digit.
_PAIRS = tuple(high + low for high in _ALPHABET for low in _ALPHABET)
_PAIR = len(_PAIRS)
assert _CHECKSUM_LENGTH == 6 and _PAIR**3 > 0xFFFF_FFFF, "a CRC32 fits in three pairs"


def _checksum(random_part: str) -> str:
    """The CRC32 of ``random_part`` in six base62 digits, most significant first."""
    crc = zlib.crc32(random_part.encode())
    return _PAIRS[crc // _PAIR**2] + _PAIRS[crc // _PAIR % _PAIR] + _PAIRS[crc % _PAIR]


def generate_key() -> str:
    random_part = "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM_LENGTH))
    return KEY_PREFIX + random_part + _checksum(random_part)


# One regular expression: every request checks its key's shape.
_KEY_SHAPE = re.compile(
    re.escape(KEY_PREFIX) + f"[0-9A-Za-z]{{{_RANDOM_LENGTH + _CHECKSUM_LENGTH}}}"
)


def has_key_shape(key: str) -> bool:
    """``hl_live_`` and 38 base62 characters, whatever the checksum."""
    return _KEY_SHAPE.fullmatch(key) is not None


def is_well_formed(key: str) -> bool:
    if not has_key_shape(key):
        return False
    body = key[len(KEY_PREFIX) :]
    random_part, checksum = body[:_RANDOM_LENGTH], body[_RANDOM_LENGTH:]
    return secrets.compare_digest(_checksum(random_part), checksum)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class AuthContext:
    account_id: str
    key_id: str
    scopes: frozenset[str]
    last_used_at: datetime | None


def normalize_scopes(scopes: list[str] | None) -> list[str]:
    if not scopes:
        return list(SCOPES)
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(unknown)}; known: {', '.join(SCOPES)}")
    return [s for s in SCOPES if s in scopes]


async def create_key(
    conn: Connection, account_id: str, name: str, scopes: list[str] | None = None
) -> tuple[str, dict[str, Any]]:
    """Returns (the full key, shown once; the key's public record)."""
    key = generate_key()
    row = {
        "id": ids.key_id(),
        "account_id": account_id,
        "name": name,
        "prefix": key[:DISPLAY_PREFIX_LENGTH],
        "key_hash": hash_key(key),
        "scopes": normalize_scopes(scopes),
        "created_at": utcnow(),
        "last_used_at": None,
        "revoked_at": None,
    }
    await conn.execute(queries.INSERT, row)
    return key, key_out(row)


def key_out(row: Any) -> dict[str, Any]:
    data = dict(row._mapping) if hasattr(row, "_mapping") else dict(row)
    return {
        "id": data["id"],
        "name": data["name"],
        "prefix": data["prefix"],
        "scopes": list(data["scopes"]),
        "created_at": iso(data["created_at"]),
        "last_used_at": iso(data["last_used_at"]),
        "revoked_at": iso(data["revoked_at"]),
    }


async def authenticate(source: Database | Connection, key: str) -> AuthContext | None:
    """The live key's context, or None (unknown, revoked, or malformed)."""
    if not is_well_formed(key):
        return None
    row = await fetch_one(source, queries.LIVE_BY_HASH, {"key_hash": hash_key(key)})
    if row is None:
        return None
    return AuthContext(row.account_id, row.id, frozenset(row.scopes), row.last_used_at)


async def touch_last_used(conn: Connection, key_id: str, when: datetime) -> None:
    await conn.execute(queries.TOUCH, {"b_id": key_id, "last_used_at": when})


async def list_keys(conn: Connection, account_id: str) -> list[dict[str, Any]]:
    rows = await conn.execute(queries.OF_ACCOUNT, {"account_id": account_id})
    return [key_out(r) for r in rows]


async def revoke_key(conn: Connection, account_id: str, key_id: str) -> bool:
    params = {"b_id": key_id, "b_account_id": account_id, "revoked_at": utcnow()}
    result = await conn.execute(queries.REVOKE, params)
    return bool(result.rowcount)


async def account_exists(conn: Connection, account_id: str) -> bool:
    return await conn.scalar(account_queries.ID_OF, {"account_id": account_id}) is not None


ACCOUNTS_PAGE = 500


async def accounts_page(conn: Connection, after: str = "") -> list[dict[str, Any]]:
    """Up to ``ACCOUNTS_PAGE`` accounts whose id is after ``after``, oldest first: id, name,
    created_at, members (dashboard users) and live_keys."""
    rows = await conn.execute(account_queries.PAGE, {"after": after, "limit": ACCOUNTS_PAGE})
    return [
        {
            "id": row.id,
            "name": row.name,
            "created_at": iso(row.created_at),
            "members": row.members,
            "live_keys": row.live_keys,
        }
        for row in rows
    ]


async def create_account(conn: Connection, name: str) -> str:
    account = ids.account_id()
    row = {"id": account, "name": name, "created_at": utcnow()}
    await conn.execute(account_queries.INSERT, row)
    return account
