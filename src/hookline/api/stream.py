"""``GET /v1/events/stream``: the account's events as Server-Sent Events, in commit order.

Idle streams hold no database connection: one ``StreamHub`` task per process reads the highest
stream number every ``stream_poll_seconds`` (one indexed query, whatever the number of
streams) and wakes the streams when it moved; each woken stream then reads its own account's
new events and goes back to waiting. A comment line goes out at least every
``stream_heartbeat_seconds`` so proxies keep the connection open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from pydantic import Field
from starlette.responses import StreamingResponse

from hookline import ids
from hookline.api.deps import DB, ContactsRead
from hookline.api.openapi import error_responses
from hookline.api.routing import DirectRoute
from hookline.delivery.signing import event_body
from hookline.domain import stream as domain
from hookline.domain.events import EVENT_TYPES
from hookline.errors import NotFound, ValidationFailed
from hookline.storage.db import Database

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


class StreamHub:
    """Wakes every open stream of this process when new events were numbered."""

    def __init__(self, db: Database, poll_seconds: float) -> None:
        self._db = db
        self._poll = poll_seconds
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def changed(self) -> asyncio.Event:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch())
        return self._changed

    async def _watch(self) -> None:
        last = -1
        while True:
            try:
                async with self._db.read() as conn:
                    latest = await domain.latest_seq(conn)
                if latest != last:
                    last = latest
                    self._changed.set()
                    self._changed = asyncio.Event()
            except Exception:
                log.warning("reading the stream position failed", exc_info=True)
            await asyncio.sleep(self._poll)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


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


async def _start(db: Database, account_id: str, cursor: str | None, field: str) -> int:
    async with db.read() as conn:
        if cursor is None:
            return await domain.latest_seq(conn, account_id)
        position = await domain.position_of(conn, account_id, cursor)
    if position is None:
        # Like any id of another account, or unknown: a 404.
        raise NotFound(f"{field}: no streamed event with id {cursor}.")
    return position


def _message(row: Any) -> bytes:
    body = event_body(row.id, row.type, row.created_at, row.data, row.previous_attributes)
    return f"id: {row.id}\nevent: {row.type}\ndata: ".encode() + body + b"\n\n"


@router.get(
    "/stream",
    responses=error_responses(401, 403, 404, 422),
    summary="Stream the account's events as Server-Sent Events",
    description="Each message: `id:` the event id, `event:` the type, `data:` the body exactly "
    "as a webhook delivery carries it. Without `Last-Event-ID` or `after`, from now on; with "
    "either, every event committed after that one, in commit order, nothing skipped. A "
    "comment line at least every 15 s. Requires `contacts:read`.",
    response_class=StreamingResponse,
)
async def stream_events(
    request: Request,
    auth: ContactsRead,
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
    wanted = _types(types)
    cursor, field = (last_event_id, "Last-Event-ID") if last_event_id else (after, "after")
    position = await _start(db, auth.account_id, cursor, field)
    hub = _hub(request)
    heartbeat = request.app.state.settings.stream_heartbeat_seconds

    async def messages() -> AsyncIterator[bytes]:
        nonlocal position
        yield b": connected\n\n"
        while True:
            changed = hub.changed()
            async with db.read() as conn:
                rows = await domain.events_after(conn, auth.account_id, position, wanted)
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

    return StreamingResponse(
        messages(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
