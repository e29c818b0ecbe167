"""``GET /v1/events/stream``: the account's events in commit order (``stream_seq``, numbered by
the dispatcher; see ``storage.deliverystore``), and each key's open streams.

A key's open streams are rows of ``event_streams``, so its cap holds across the processes and
machines that share the database: opening one counts the key's rows with the key locked, and a
process renews its streams' rows while they are open. A row whose process died expires after
``LEASE``; a stream whose row is gone, or whose key is no longer live, is closed by its process.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from hookline import ids
from hookline.errors import RateLimited, Unauthenticated
from hookline.storage.db import Connection
from hookline.storage.queries import stream as queries

BATCH = 100
# How long an open stream's row counts without its process renewing it.
LEASE = timedelta(seconds=30)
# A stream over the cap is refused with this Retry-After: a slot frees when one closes.
RETRY_AFTER_SECONDS = 5


async def latest_seq(conn: Connection, account_id: str | None = None) -> int:
    """The highest number handed out (the account's, or anyone's); 0 when none."""
    if account_id is None:
        return int(await conn.scalar(queries.LATEST_SEQ) or 0)
    return int(await conn.scalar(queries.LATEST_SEQ_OF_ACCOUNT, {"account_id": account_id}) or 0)


async def position_of(
    conn: Connection, account_id: str, event_id: str, types: Sequence[str] | None = None
) -> int | None:
    """The number of one of the account's streamed events, of one of ``types`` when given;
    None if unknown or not yet numbered."""
    params = {"id": event_id, "account_id": account_id, "types": types}
    query = queries.SEQ_OF if types is None else queries.SEQ_OF_TYPES
    value = await conn.scalar(query, params)
    return int(value) if value is not None else None


async def events_after(
    conn: Connection, account_id: str, after: int, types: Sequence[str] | None
) -> list[Any]:
    """The next batch after number ``after``, in commit order; targeted events (tests,
    examples) are for one webhook and never streamed."""
    params = {"account_id": account_id, "after": after, "types": types, "limit": BATCH}
    return list(await conn.execute(queries.AFTER.get(bool(types)), params))


async def open_stream(
    conn: Connection, account_id: str, key_id: str, cap: int, now: datetime
) -> str:
    """Counts a new open stream of the key and returns its id; 429 when the key holds ``cap``
    already, 401 when it was revoked meanwhile. Run in a transaction (``db.begin()``)."""
    key = {"id": key_id, "account_id": account_id}
    if await conn.scalar(queries.LIVE_KEY_FOR_UPDATE, key) is None:
        raise Unauthenticated("This API key is unknown or was revoked.")
    await conn.execute(queries.DROP_EXPIRED, {"now": now})
    held = await conn.scalar(queries.COUNT_OF_KEY, {"account_id": account_id, "key_id": key_id})
    if int(held or 0) >= cap:
        raise RateLimited(
            f"This API key has {cap} open event streams, the most it may hold at once; close "
            "one first.",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    stream_id = ids.uuid7()
    row = {"id": stream_id, "account_id": account_id, "key_id": key_id}
    await conn.execute(queries.OPEN, {**row, "opened_at": now, "expires_at": now + LEASE})
    return stream_id


async def renew_streams(conn: Connection, stream_ids: Sequence[str], now: datetime) -> set[str]:
    """Pushes the open streams' expiry on; returns the ids still counted (a stream missing was
    dropped as expired: its process must close it)."""
    params = {"ids": list(stream_ids), "expires_at": now + LEASE}
    return {row.id for row in await conn.execute(queries.RENEW, params)}


async def close_stream(conn: Connection, stream_id: str) -> None:
    await conn.execute(queries.CLOSE, {"id": stream_id})


async def live_keys(conn: Connection, key_ids: Collection[str]) -> set[str]:
    """Which of ``key_ids`` are neither revoked nor deleted."""
    rows = await conn.execute(queries.LIVE_KEYS, {"key_ids": list(key_ids)})
    return {row.id for row in rows}
