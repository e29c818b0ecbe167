"""``Idempotency-Key`` on every ``POST /v1/...``, per account, for 24 hours.

    same key, same request   -> the first response again, with ``Idempotent-Replayed: true``
    same key, other request  -> 422 ``idempotency_key_reused``
    first one still running  -> 409 ``conflict``

The request is ``sha256(method, path, body)``. The key is reserved (INSERT into
``idempotency_keys``, ``response_status`` NULL) in its own committed transaction before the handler
runs, so concurrent duplicates collide on the primary key whatever process they reach. The
response is stored before it is sent, so a client that retries at once gets the replay.

Only successful (< 400) responses are kept. An error response means the handler's transaction
rolled back and nothing happened, so the reservation is released and a retry runs afresh (as
Stripe does); the same goes for crashes, 5xx and disconnects.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from fastapi import Request
from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline.api.deps import authenticate, spawn
from hookline.api.errors import error_response
from hookline.errors import ApiError, Conflict, IdempotencyKeyReused, ValidationFailed
from hookline.limits.body import ClientGone, read_body, replay_body
from hookline.storage.db import Database
from hookline.storage.models import idempotency_keys as keys_table
from hookline.timeutil import utcnow

log = logging.getLogger("hookline.idempotency")

TTL = timedelta(hours=24)
MAX_KEY_LENGTH = 255
HEADER = b"idempotency-key"
# Expired rows are also ignored on lookup; the sweep only bounds the table's size.
PRUNE_EVERY = timedelta(minutes=10)
# Headers of the first response that a replay repeats (the rest are per request or recomputed).
_NOT_REPLAYED = frozenset({b"content-length", b"date", b"server", b"set-cookie", b"x-request-id"})


def request_hash(method: str, path: str, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode("utf-8", "surrogateescape"), body):
        digest.update(len(part).to_bytes(8, "big"))  # length-prefixed: no ambiguous joins
        digest.update(part)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Slot:
    account_id: str
    key: str

    def where(self) -> Any:
        return and_(keys_table.c.account_id == self.account_id, keys_table.c.key == self.key)


@dataclass(frozen=True, slots=True)
class Reservation:
    owned: bool
    existing: Row[Any] | None


class IdempotencyStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def reserve(self, slot: Slot, hashed: str, now: datetime) -> Reservation:
        """Owned when this request now holds the key; else the row holding it, if visible yet."""
        try:
            async with self.db.begin() as conn:
                # An expired row no longer counts: clear it so the key can be reused.
                await conn.execute(
                    delete(keys_table).where(slot.where(), keys_table.c.created_at < now - TTL)
                )
                await conn.execute(
                    insert(keys_table).values(
                        account_id=slot.account_id,
                        key=slot.key,
                        request_hash=hashed,
                        response_status=None,
                        response_headers=None,
                        response_body=None,
                        created_at=now,
                    )
                )
            return Reservation(owned=True, existing=None)
        except IntegrityError:
            # The holder may not be visible yet (its transaction still committing, e.g. in the
            # same SQLite group commit) or may have been released since: both read as in flight.
            async with self.db.read() as conn:
                row = (await conn.execute(select(keys_table).where(slot.where()))).first()
            return Reservation(owned=False, existing=row)

    async def complete(
        self, slot: Slot, status: int, headers: list[list[str]], body: bytes
    ) -> None:
        async with self.db.begin() as conn:
            await conn.execute(
                update(keys_table)
                .where(slot.where())
                .values(
                    response_status=status,
                    response_headers=headers,
                    response_body=body.decode("utf-8", "replace"),
                )
            )

    async def release(self, slot: Slot) -> None:
        async with self.db.begin() as conn:
            await conn.execute(
                delete(keys_table).where(slot.where(), keys_table.c.response_status.is_(None))
            )

    async def prune(self, now: datetime) -> int:
        async with self.db.begin() as conn:
            result = await conn.execute(
                delete(keys_table).where(keys_table.c.created_at < now - TTL)
            )
        return int(result.rowcount or 0)


def _idempotency_key(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == HEADER:
            return str(value.decode("latin-1"))
    return None


class IdempotencyMiddleware:
    """Pure ASGI; sits inside ``RequestContext`` and ``BodyGuard`` (the body is buffered)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._next_prune = utcnow()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _idempotency_key(scope) if scope["type"] == "http" else None
        if key is None or scope["method"] != "POST" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            # The same dependency the route uses: it caches its result (and its rate-limit
            # charge) on the request, so the route doesn't authenticate twice.
            context = await authenticate(request)
            _check_key(key)
            body = await read_body(receive)
        except ApiError as exc:
            await error_response(request, exc)(scope, receive, send)
            return
        except ClientGone:
            return
        store = IdempotencyStore(request.app.state.db)
        slot = Slot(context.account_id, key)
        hashed = request_hash(scope["method"], scope["path"], body)
        now = utcnow()
        self._maybe_prune(request, store, now)
        reservation = await store.reserve(slot, hashed, now)
        if not reservation.owned:
            await _answer_existing(request, reservation.existing, hashed, send)
            return
        await _run_and_record(self.app, scope, replay_body(body, receive), send, store, slot)

    def _maybe_prune(self, request: Request, store: IdempotencyStore, now: datetime) -> None:
        if now < self._next_prune:
            return
        self._next_prune = now + PRUNE_EVERY

        async def prune() -> None:
            await store.prune(now)

        spawn(request, prune())


def _check_key(key: str) -> None:
    if not key.strip() or len(key) > MAX_KEY_LENGTH:
        raise ValidationFailed.for_field(
            "Idempotency-Key", f"Idempotency-Key must be 1..{MAX_KEY_LENGTH} characters"
        )


async def _answer_existing(request: Request, row: Row[Any] | None, hashed: str, send: Send) -> None:
    scope, receive = request.scope, request.receive
    if row is not None and row.request_hash != hashed:
        await error_response(request, IdempotencyKeyReused())(scope, receive, send)
        return
    if row is None or row.response_status is None:
        # In flight (or released an instant ago by a failed first attempt): try again shortly.
        conflict = Conflict("A request with this Idempotency-Key is still in progress; retry.")
        await error_response(request, conflict)(scope, receive, send)
        return
    body = (row.response_body or "").encode()
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in row.response_headers or []]
    headers += [
        (b"content-length", str(len(body)).encode()),
        (b"idempotent-replayed", b"true"),
    ]
    await send({"type": "http.response.start", "status": row.response_status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _run_and_record(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, store: IdempotencyStore, slot: Slot
) -> None:
    """Run the handler; store its response before sending it (or release the key on failure)."""
    start: Message | None = None
    chunks: list[bytes] = []
    settled = False

    async def capture(message: Message) -> None:
        nonlocal start, settled
        if message["type"] == "http.response.start":
            start = message
            return
        if message["type"] != "http.response.body" or start is None:
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = b"".join(chunks)
        status: int = start["status"]
        if status < 400:
            await store.complete(slot, status, _replayable(start), body)
        else:
            await store.release(slot)
        settled = True
        await send(start)
        await send({"type": "http.response.body", "body": body})

    try:
        await app(scope, receive, capture)
    finally:
        if not settled:
            # Crash, cancellation or a failed store: free the key so a retry can proceed.
            await asyncio.shield(_release_quietly(store, slot))


def _replayable(start: Message) -> list[list[str]]:
    return [
        [name.decode("latin-1"), value.decode("latin-1")]
        for name, value in start.get("headers", [])
        if name.lower() not in _NOT_REPLAYED
    ]


async def _release_quietly(store: IdempotencyStore, slot: Slot) -> None:
    try:
        await store.release(slot)
    except Exception:
        log.exception("could not release an idempotency key after a failed request")
