"""``GET /v1/events/stream``: the account's events as Server-Sent Events, in commit order.

Idle streams hold no database connection: one ``StreamHub`` task per process reads the highest
stream number every ``stream_poll_seconds`` (one indexed query, whatever the number of
streams) and wakes the streams when it moved; each woken stream then reads its own account's
new events and goes back to waiting. A comment line goes out at least every
``stream_heartbeat_seconds`` so proxies keep the connection open.

A stream shows only the events its key may read (``api.events.readable``). Each open stream
is counted as one of its key's (``domain.stream``, at most ``streams_per_key``, whatever
process serves them); the hub renews this process's count, and ends the streams whose key was
revoked (it looks every ``KEY_CHECK_SECONDS``) or whose count was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from pydantic import Field
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from hookline import ids
from hookline.api.deps import DB
from hookline.api.events import EventsRead, readable
from hookline.api.openapi import error_responses
from hookline.api.routing import DirectRoute
from hookline.delivery.signing import event_body
from hookline.domain import stream as domain
from hookline.domain.events import EVENT_TYPES
from hookline.domain.keys import AuthContext
from hookline.errors import NotFound, ValidationFailed
from hookline.storage.db import Database
from hookline.timeutil import utcnow

log = logging.getLogger("hookline.stream")
# DirectRoute, as every /v1 route: an unknown query parameter is a 422 before anything streams.
router = APIRouter(prefix="/v1/events", tags=["events"], route_class=DirectRoute)
STREAMABLE = EVENT_TYPES
# An id of another shape names no event: a 404, as for an unknown one (``_start``).
_EVENT_ID = ids.pattern_of("event_id").removeprefix("^").removesuffix("$")
EventId = Annotated[str, Field(json_schema_extra={"pattern": f"^{_EVENT_ID}$"})]
# An empty Last-Event-ID is no id (an EventSource whose last event had none sends it so).
LastEventId = Annotated[str, Field(json_schema_extra={"pattern": f"^(?:{_EVENT_ID})?$"})]
_ONE_TYPE = "|".join(t.replace(".", "\\.") for t in STREAMABLE)
# A revoked key's streams end within 5 s (contract): the hub looks this often.
KEY_CHECK_SECONDS = 1.0
# Open streams' counts are renewed well before they would expire.
RENEW_SECONDS = domain.LEASE.total_seconds() / 3
_ENDED = b": closed: this API key was revoked or its stream was ended\n\n"


@dataclass(eq=False, slots=True)
class OpenStream:
    """One open stream of this process: its count's id and its key."""

    id: str
    key_id: str
    ended: bool = False


class StreamHub:
    """Wakes every open stream of this process when new events were numbered; renews their
    counts and ends those whose key is no longer live."""

    def __init__(self, db: Database, poll_seconds: float) -> None:
        self._db = db
        self._poll = poll_seconds
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._open: set[OpenStream] = set()

    def changed(self) -> asyncio.Event:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch())
        return self._changed

    def add(self, stream: OpenStream) -> None:
        self._open.add(stream)
        self.changed()

    async def remove(self, stream: OpenStream) -> None:
        """Forget a stream that ended, and its count."""
        self._open.discard(stream)
        await self._logged(self._close(stream.id), "closing a stream's count")

    async def _close(self, stream_id: str) -> None:
        async with self._db.begin() as conn:
            await domain.close_stream(conn, stream_id)

    async def _watch(self) -> None:
        last = -1
        next_check = next_renewal = time.monotonic()
        while True:
            last = await self._look(last)
            now = time.monotonic()
            if self._open and now >= next_check:
                next_check = now + KEY_CHECK_SECONDS
                await self._logged(self._end_dead_keys(), "checking the streams' keys")
            if self._open and now >= next_renewal:
                next_renewal = now + RENEW_SECONDS
                await self._logged(self._renew(), "renewing the streams' counts")
            await asyncio.sleep(self._poll)

    async def _look(self, last: int) -> int:
        """Wakes the streams if events were numbered since ``last``; the latest number."""
        try:
            async with self._db.read() as conn:
                latest = await domain.latest_seq(conn)
        except Exception:
            log.warning("reading the stream position failed", exc_info=True)
            return last
        if latest != last:
            self._wake()
        return latest

    async def _end_dead_keys(self) -> None:
        streams = list(self._open)
        async with self._db.read() as conn:
            live = await domain.live_keys(conn, {stream.key_id for stream in streams})
        self._end([stream for stream in streams if stream.key_id not in live])

    async def _renew(self) -> None:
        streams = list(self._open)
        async with self._db.begin() as conn:
            held = await domain.renew_streams(conn, [s.id for s in streams], utcnow())
        self._end([stream for stream in streams if stream.id not in held])

    def _end(self, streams: Sequence[OpenStream]) -> None:
        for stream in streams:
            stream.ended = True
            self._open.discard(stream)
        if streams:
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @staticmethod
    async def _logged(work: Awaitable[None], what: str) -> None:
        try:
            await work
        except Exception:
            log.warning("%s failed", what, exc_info=True)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class EventStreamResponse(StreamingResponse):
    """The stream: counted among its key's open streams (by the hub) until it ends."""

    def __init__(self, messages: AsyncIterator[bytes], hub: StreamHub, stream: OpenStream) -> None:
        super().__init__(
            messages,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self._hub = hub
        self._stream = stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._hub.add(self._stream)
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._hub.remove(self._stream)


def _hub(request: Request) -> StreamHub:
    hub: StreamHub | None = getattr(request.app.state, "stream_hub", None)
    if hub is None:
        settings = request.app.state.settings
        hub = StreamHub(request.app.state.db, settings.stream_poll_seconds)
        request.app.state.stream_hub = hub
    return hub


def _types(value: str | None) -> list[str] | None:
    if value is None:
        return None
    wanted = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [part for part in wanted if part not in STREAMABLE]
    if not wanted or unknown:
        raise ValidationFailed.for_field(
            "types", f"types must be a comma-separated list of {', '.join(STREAMABLE)}"
        )
    return wanted


async def _start(
    db: Database, account_id: str, cursor: str | None, field: str, types: Sequence[str] | None
) -> int:
    async with db.read() as conn:
        if cursor is None:
            return await domain.latest_seq(conn, account_id)
        position = await domain.position_of(conn, account_id, cursor, types)
    if position is None:
        # Like any id of another account, unknown, or of an event the key may not read: a 404.
        raise NotFound(f"{field}: no streamed event with id {cursor}.")
    return position


async def _open(request: Request, db: Database, auth: AuthContext) -> OpenStream:
    """Counts the stream among its key's open streams (429 past the cap)."""
    cap = request.app.state.settings.streams_per_key
    async with db.begin() as conn:
        stream_id = await domain.open_stream(conn, auth.account_id, auth.key_id, cap, utcnow())
    return OpenStream(stream_id, auth.key_id)


def _message(row: Any) -> bytes:
    body = event_body(row.id, row.type, row.created_at, row.data, row.previous_attributes)
    return f"id: {row.id}\nevent: {row.type}\ndata: ".encode() + body + b"\n\n"


@router.get(
    "/stream",
    responses=error_responses(401, 403, 404, 422, 429),
    summary="Stream the account's events as Server-Sent Events",
    description="Each message: `id:` the event id, `event:` the type, `data:` the body exactly "
    "as a webhook delivery carries it. Without `Last-Event-ID` or `after`, from now on; with "
    "either, every event committed after that one, in commit order, nothing skipped. A "
    "comment line at least every 15 s. Shows the events the key may read (as `GET "
    "/v1/events`); `types` naming one it may not is a 403. A key holds at most "
    "`HOOKLINE_STREAMS_PER_KEY` streams at once (429 past it); revoking the key ends them.",
    response_class=StreamingResponse,
)
async def stream_events(
    request: Request,
    auth: EventsRead,
    db: DB,
    after: Annotated[EventId | None, Query(description="Resume after this event.")] = None,
    types: Annotated[
        str | None,
        Query(
            max_length=1000,
            description="a,b: only these types.",
            json_schema_extra={"pattern": f"^({_ONE_TYPE})(,({_ONE_TYPE}))*$"},
        ),
    ] = None,
    last_event_id: Annotated[
        LastEventId | None, Header(description="Resume after this event; empty: none.")
    ] = None,
) -> StreamingResponse:
    shown = readable(auth, _types(types))
    cursor, field = (last_event_id, "Last-Event-ID") if last_event_id else (after, "after")
    position = await _start(db, auth.account_id, cursor, field, readable(auth, None))
    hub = _hub(request)
    heartbeat = request.app.state.settings.stream_heartbeat_seconds
    stream = await _open(request, db, auth)

    async def messages() -> AsyncIterator[bytes]:
        nonlocal position
        yield b": connected\n\n"
        while True:
            if stream.ended:
                yield _ENDED
                return
            changed = hub.changed()
            async with db.read() as conn:
                rows = await domain.events_after(conn, auth.account_id, position, shown)
            for row in rows:
                yield _message(row)
            if rows:
                position = max(position, *(row.stream_seq for row in rows))
                if len(rows) == domain.BATCH:
                    continue
            while not changed.is_set():  # nothing new: only heartbeats, no queries
                try:
                    async with asyncio.timeout(heartbeat):
                        await changed.wait()
                except TimeoutError:
                    yield b": keep-alive\n\n"

    return EventStreamResponse(messages(), hub, stream)
