"""``/v1/events``: the account's events of the last 30 days, for reconciliation."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from hookline.api.deps import DB, ContactsRead
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
from hookline.errors import NotFound, ValidationFailed
from hookline.schemas.events import EventOut

router = APIRouter(prefix="/v1/events", tags=["events"], route_class=DirectRoute)

KNOWN_TYPES = [*domain.EVENT_TYPES, domain.TEST_EVENT_TYPE]
SCOPE_NOTE = (
    "Requires the `contacts:read` scope: events carry contact objects (and call objects, which "
    "name contacts), so reading them is reading contacts."
)


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
    auth: ContactsRead,
    db: DB,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
    offset: OffsetQuery = None,
    type: Annotated[
        str | None,
        Query(description="Only events of this type.", json_schema_extra={"enum": KNOWN_TYPES}),
    ] = None,
) -> JSONResponse:
    event_type = _type_filter(type)
    async with db.read() as conn:
        rows = await domain.list_events(
            conn,
            auth.account_id,
            limit=limit + 1,
            before_id=decode_cursor(cursor),
            offset=skipped(cursor, offset),
            event_type=event_type,
        )
    return page(request, rows, limit, _all_fields)


@router.get(
    "/{event_id}",
    response_model=EventOut,
    responses=error_responses(401, 403, 404),
    summary="Get an event",
    description=SCOPE_NOTE,
)
async def get_event(event_id: str, auth: ContactsRead, db: DB) -> JSONResponse:
    async with db.read() as conn:
        event = await domain.get_event(conn, auth.account_id, event_id)
    if event is None:
        raise NotFound(f"No event with id {event_id}.")
    return JSONResponse(_all_fields(event))
