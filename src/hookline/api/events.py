"""``/v1/events``: the account's events of the last 30 days, for reconciliation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from hookline.api.deps import DB, require_any
from hookline.api.openapi import error_responses
from hookline.api.pagination import (
    CursorQuery,
    LimitQuery,
    OffsetQuery,
    decode_cursor,
    page,
    skipped,
)
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain import events as domain
from hookline.domain.keys import AuthContext
from hookline.errors import Forbidden, NotFound, ValidationFailed
from hookline.schemas.common import Since, Until
from hookline.schemas.events import EventOut

router = APIRouter(prefix="/v1/events", tags=["events"], route_class=DirectRoute)

KNOWN_TYPES = [*domain.EVENT_TYPES, domain.TEST_EVENT_TYPE]
SCOPE_NOTE = (
    "Shows only the events the key may read: `contact.*` with `contacts:read`; `call.*`, "
    "`lead.qualified` and `appointment.booked` with `calls:read`; `webhook.*` and "
    "`delivery.*` with `webhooks:read`. Requires at least one of the three."
)


EventsRead = Annotated[
    AuthContext,
    Depends(
        require_any(
            domain.READ_SCOPES,
            "This API key can read no events: it needs "
            f"{', '.join(domain.READ_SCOPES[:-1])} or {domain.READ_SCOPES[-1]}.",
        )
    ),
]


def readable(auth: AuthContext, wanted: Sequence[str] | None) -> Sequence[str] | None:
    """The types to show: ``wanted`` when given, each of which the key must be able to read
    (else a 403 naming the scope it lacks); otherwise every type the key reads (None: all)."""
    allowed = domain.readable_types(auth.scopes)
    if not wanted:
        return allowed
    for event_type in wanted:
        if allowed is not None and event_type not in allowed:
            scope = domain.read_scope(event_type)
            raise Forbidden(f"This API key lacks the '{scope}' scope to read {event_type} events.")
    return wanted


def _all_fields(event: dict[str, Any]) -> dict[str, Any]:
    # The delivered payload has previous_attributes on contact.updated only; API objects always
    # carry every field (null when unset), as the contract's conventions require.
    return {**event, "previous_attributes": event.get("previous_attributes")}


def _type_filter(value: str | None) -> str | None:
    if value is not None and value not in KNOWN_TYPES:
        raise ValidationFailed.for_field("type", f"type must be one of {', '.join(KNOWN_TYPES)}")
    return value


@router.get(
    "",
    response_model=list[EventOut],
    responses=error_responses(401, 403, 422),
    summary="List the account's events of the last 30 days, newest first",
    description=SCOPE_NOTE,
)
async def list_events(
    request: Request,
    auth: EventsRead,
    db: DB,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
    offset: OffsetQuery = None,
    type: Annotated[
        str | None,
        Query(description="Only events of this type.", json_schema_extra={"enum": KNOWN_TYPES}),
    ] = None,
    object_id: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=100,
            pattern=r"^[A-Za-z0-9_-]+$",
            description="Only events about this contact or call (a call's events also count "
            "for its contact).",
        ),
    ] = None,
    since: Since | None = Query(default=None, description="Only events created at or after."),
    until: Until | None = Query(default=None, description="Only events created at or before."),
) -> JSONResponse:
    event_type = _type_filter(type)
    if since is not None and until is not None and until < since:
        raise ValidationFailed.for_field("until", "until must not be before since")
    types = readable(auth, [event_type] if event_type else None)
    async with db.read() as conn:
        rows = await domain.list_events(
            conn,
            auth.account_id,
            limit=limit + 1,
            before_id=decode_cursor(cursor),
            offset=skipped(cursor, offset),
            event_type=event_type,
            types=types,
            object_id=object_id,
            since=since,
            until=until,
        )
    return page(request, rows, limit, _all_fields)


@router.get(
    "/{event_id}",
    response_model=EventOut,
    responses=error_responses(401, 403, 404),
    summary="Get an event",
    description=SCOPE_NOTE,
)
async def get_event(event_id: str, auth: EventsRead, db: DB) -> JSONResponse:
    # An event the key may not read is a 404, as an unknown one: its existence is not told.
    types = domain.readable_types(auth.scopes)
    async with db.read() as conn:
        event = await domain.get_event(conn, auth.account_id, event_id, types)
    if event is None:
        raise NotFound(f"No event with id {event_id}.")
    return JSONResponse(_all_fields(event))
