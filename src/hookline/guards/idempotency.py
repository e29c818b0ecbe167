"""``Idempotency-Key`` on every ``POST /v1/...``, per account, for 24 hours.

    same key, same request   -> the first response again, with ``Idempotent-Replayed: true``
    same key, other request  -> 422 ``idempotency_key_reused``
    first one still running  -> 409 ``conflict``

The request is ``sha256(method, path, body)``. The guard runs around the endpoint itself (the
route runner, ``api.routing.Runner``, calls it on every POST), so it runs after the route's
key and validation: a replay is authenticated, scope-checked and validated
exactly like a fresh request, and gets the same 401/403/422 when those fail.

The reservation, the handler's writes and the stored response are one transaction, the
request's own (``Database.hold``): the handler's first ``db.begin()`` opens it with the
reservation (an upsert into ``idempotency_keys``) as its first statement, every write of the
handler joins it, and the response is stored in it before the COMMIT. A crash at any point
leaves either all of it or none of it, never a key stuck "in progress".

A duplicate sent while the first runs gets 409 at once: in the same process from the set of keys
in flight; in another, on PostgreSQL, because the reservation also takes the key's advisory lock
(``pg_try_advisory_xact_lock``), which the holder keeps until its COMMIT. (Two processes on one
SQLite file: the duplicate waits for the single writer, then finds the stored response.) Whatever
the process, duplicates collide on the primary key ``(account_id, key)``, and a replay is only
ever of a committed row (on SQLite, read inside the writer, it answers once that batch is
committed), so it never shows a response that a failed commit took back.

Only successful (< 400) responses are kept: an error, an exception or a crash rolls the whole
transaction back, reservation included, so a corrected retry with the same key runs afresh (as
Stripe does). Stored bodies are encrypted with the secret key that protects webhook secrets
(they can hold a webhook's signing secret). A committed row without a response can only come from
an older hookline that reserved keys in a transaction of their own: it answers 409 while it is
young (that process may still be running the request) and is taken over after
``ABANDONED_AFTER``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastapi import Request
from starlette.responses import Response

from hookline.background import spawn
from hookline.crypto import SecretBox
from hookline.errors import Conflict, IdempotencyKeyReused, ValidationFailed
from hookline.storage.connector import Connection
from hookline.storage.db import Database, Preempted, fetch_all, fetch_one
from hookline.storage.queries import idempotency as queries
from hookline.timeutil import utcnow

TTL = timedelta(hours=24)
# No request runs this long: a reservation row this old, still without a response, is abandoned.
ABANDONED_AFTER = timedelta(minutes=1)
MAX_KEY_LENGTH = 255
HEADER = "idempotency-key"
# Expired rows are also ignored on lookup; the sweep only bounds the table's size.
PRUNE_EVERY = timedelta(minutes=10)
# Headers of the first response that a replay does not repeat (recomputed or per request).
_NOT_REPLAYED = frozenset({b"content-length", b"date", b"server", b"set-cookie", b"x-request-id"})
# Every Fernet token starts so (version byte 0x80, then the timestamp's leading zero bytes); a
# JSON body never does. Older hooklines stored bodies in clear (never a secret: see migration
# 0003_idem), and their rows stay readable for their 24 h.
_SEALED_PREFIX = "gAAAAA"


def request_hash(method: str, path: str, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode("utf-8", "surrogateescape"), body):
        digest.update(len(part).to_bytes(8, "big"))  # length-prefixed: no ambiguous joins
        digest.update(part)
    return digest.hexdigest()


def applies_to(methods: Iterable[str] | None) -> bool:
    return "POST" in (methods or ())


@dataclass(frozen=True, slots=True)
class Slot:
    account_id: str
    key: str

    def params(self) -> dict[str, str]:
        return {"b_account_id": self.account_id, "b_key": self.key}

    def lock_id(self) -> int:
        """The key's PostgreSQL advisory lock (64 bits of a hash: a collision costs a 409)."""
        digest = hashlib.sha256(f"{self.account_id}\0{self.key}".encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)


def _in_progress() -> Conflict:
    return Conflict("A request with this Idempotency-Key is still in progress; retry.")


class KeyTaken(Preempted):
    """Another request holds this key, or held it and stored its response."""

    def __init__(self, row: Any | None) -> None:
        super().__init__("idempotency key taken")
        self.row = row


class IdempotencyStore:
    def __init__(self, db: Database, box: SecretBox) -> None:
        self.db = db
        self.box = box
        self._next_prune = utcnow()
        # Keys whose request this process is running: a duplicate gets its 409 without waiting
        # for the held transaction (on SQLite, for the single writer).
        self.in_flight: set[Slot] = set()

    async def lookup(self, slot: Slot, now: datetime) -> Any | None:
        """The committed row that decides this key's answer, or None if the key is free."""
        row = await fetch_one(self.db, queries.LOOKUP, slot.params())
        return None if row is None or _is_free(row, now) else row

    async def reserve(self, conn: Connection, slot: Slot, hashed: str, now: datetime) -> None:
        """The held transaction's first statement: take the key, or raise ``KeyTaken``."""
        params = {
            **slot.params(),
            "b_lock": slot.lock_id(),
            "b_request_hash": hashed,
            "b_created_at": now,
            "b_expired_before": now - TTL,
            "b_abandoned_before": now - ABANDONED_AFTER,
        }
        if await fetch_all(conn, queries.RESERVE[conn.dialect.name], params):
            return
        # Committed since our look-up (the row), or held by another process (no row yet).
        rows = await fetch_all(conn, queries.LOOKUP, slot.params())
        raise KeyTaken(rows[0] if rows else None)

    async def store(self, conn: Connection, slot: Slot, response: Response) -> None:
        sealed = self.box.encrypt(bytes(response.body).decode("utf-8", "replace"))
        await conn.execute(
            queries.STORE,
            {
                **slot.params(),
                "b_status": response.status_code,
                "b_headers": _replayable(response),
                "b_body": sealed,
            },
        )

    def replay(self, row: Any | None, hashed: str) -> Response:
        """The answer for a key another request holds or held."""
        if row is not None and row.request_hash != hashed:
            raise IdempotencyKeyReused()
        if row is None or row.response_status is None:
            raise _in_progress()
        stored: str = row.response_body or ""
        body = self.box.decrypt(stored) if stored.startswith(_SEALED_PREFIX) else stored
        response = Response(content=body.encode(), status_code=row.response_status)
        response.raw_headers += [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in row.response_headers or []
        ]
        response.raw_headers.append((b"idempotent-replayed", b"true"))
        return response

    async def prune(self, now: datetime) -> int:
        async with self.db.begin() as conn:
            return (await conn.execute(queries.PRUNE, {"b_before": now - TTL})).rowcount

    def maybe_prune(self, request: Request, now: datetime) -> None:
        if now < self._next_prune:
            return
        self._next_prune = now + PRUNE_EVERY

        async def prune() -> None:
            await self.prune(now)

        spawn(request, prune())


def _is_free(row: Any, now: datetime) -> bool:
    """Expired, or a reservation abandoned by an older hookline (see the module doc)."""
    if row.created_at < now - TTL:
        return True
    return row.response_status is None and row.created_at < now - ABANDONED_AFTER


def _replayable(response: Response) -> list[list[str]]:
    return [
        [name.decode("latin-1"), value.decode("latin-1")]
        for name, value in response.raw_headers
        if name.lower() not in _NOT_REPLAYED
    ]


def _check_key(key: str) -> None:
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise ValidationFailed.for_field(
            "Idempotency-Key", f"Idempotency-Key must be 1..{MAX_KEY_LENGTH} characters"
        )
    # PostgreSQL text cannot hold NUL; no control character belongs in a key.
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in key):
        raise ValidationFailed.for_field(
            "Idempotency-Key", "Idempotency-Key must not contain control characters"
        )


async def answer_once(
    request: Request, body: bytes, call: Callable[[], Awaitable[Response]]
) -> Response:
    """``call()``'s response, or the stored one if this key already has it (module doc):
    the route runner's step between the request's validation and its endpoint."""
    key = request.headers.get(HEADER)
    auth = getattr(request.state, "auth_context", None)
    if key is None or auth is None:
        return await call()
    _check_key(key)
    store: IdempotencyStore = request.app.state.idempotency
    slot = Slot(auth.account_id, key)
    hashed = request_hash(request.method, request.scope["path"], body)
    now = utcnow()
    store.maybe_prune(request, now)
    # Committed rows first: a replay does not take the write lock or run any of the handler.
    existing = await store.lookup(slot, now)
    if existing is not None:
        return store.replay(existing, hashed)

    if slot in store.in_flight:
        raise _in_progress()
    store.in_flight.add(slot)
    try:
        return await _run_held(store, slot, hashed, now, call)
    except KeyTaken as taken:
        return store.replay(taken.row, hashed)
    finally:
        store.in_flight.discard(slot)


async def _run_held(
    store: IdempotencyStore,
    slot: Slot,
    hashed: str,
    now: datetime,
    call: Callable[[], Awaitable[Response]],
) -> Response:
    """``call()`` with its writes, the reservation and the stored response in one transaction."""

    async def reserve(conn: Connection) -> None:
        await store.reserve(conn, slot, hashed, now)

    async with store.db.hold(reserve) as held:
        response = await call()
        if response.status_code >= 400:
            await held.rollback()
            return response
        await store.store(await held.connection(), slot, response)
        return response
