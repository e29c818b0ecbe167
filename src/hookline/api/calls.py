"""``/v1/calls``: start, complete, read and list calls (the source of call events)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from hookline.api.deps import DB, CallsRead, CallsWrite, JsonContent
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
from hookline.domain import calls as domain
from hookline.errors import NotFound
from hookline.schemas.calls import (
    CallComplete,
    CallCreate,
    CallOut,
    CallStatus,
    CallType,
    Outcome,
)

router = APIRouter(prefix="/v1/calls", tags=["calls"], route_class=DirectRoute)


def _not_found(call_id: str) -> NotFound:
    return NotFound(f"No call with id {call_id}.")


@router.post(
    "",
    status_code=201,
    response_model=CallOut,
    responses=error_responses(400, 401, 403, 409, 413, 415, 422),
    summary="Start a call (fires call.started)",
    description="Without `contact_id`, the call is linked to the account's contact with "
    "`customer_phone_number`, if one exists. A `contact_id` that is not one of the account's "
    "contacts is a 422. A call for a contact marked `do_not_call` is refused: 409 "
    "`do_not_call`.",
)
async def create_call(
    auth: CallsWrite, _json: JsonContent, body: CallCreate, db: DB
) -> JSONResponse:
    async with db.begin() as conn:
        call = await domain.create_call(conn, auth.account_id, body.provided())
    return JSONResponse(call, status_code=201, headers={"Location": f"/v1/calls/{call['id']}"})


@router.get(
    "",
    response_model=list[CallOut],
    responses=error_responses(401, 403, 422),
    summary="List calls, newest first",
)
async def list_calls(
    request: Request,
    auth: CallsRead,
    db: DB,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
    offset: OffsetQuery = None,
    contact_id: Annotated[str | None, Query(max_length=64)] = None,
    call_status: CallStatus | None = None,
    call_type: CallType | None = None,
    assistant_id: Annotated[str | None, Query(max_length=200)] = None,
) -> JSONResponse:
    filters = domain.CallFilters(
        contact_id=contact_id,
        call_status=call_status,
        call_type=call_type,
        assistant_id=assistant_id,
    )
    async with db.read() as conn:
        rows = await domain.list_calls(
            conn,
            auth.account_id,
            filters,
            limit=limit + 1,
            before_id=decode_cursor(cursor),
            offset=skipped(cursor, offset),
        )
    return page(request, rows, limit)


@router.get(
    "/{call_id}",
    response_model=CallOut,
    responses=error_responses(401, 403, 404),
    summary="Get a call",
)
async def get_call(call_id: str, auth: CallsRead, db: DB) -> JSONResponse:
    async with db.read() as conn:
        call = await domain.get_call(conn, auth.account_id, call_id)
    if call is None:
        raise _not_found(call_id)
    return JSONResponse(call)


@router.post(
    "/{call_id}/complete",
    response_model=CallOut,
    responses=error_responses(400, 401, 403, 404, 409, 413, 415, 422),
    summary="Complete a call (fires call.completed)",
    description="Sets `call_ended_at` (default now) and `duration_seconds` (whole seconds, "
    "rounded down), and stores the optional `analysis`. In the same transaction as "
    '`call.completed`, `analysis.lead_qualification == "qualified"` fires `lead.qualified` '
    "and `analysis.appointment_booked == true` fires `appointment.booked`. Completing a call "
    "that already ended is a 409.",
)
async def complete_call(
    call_id: str,
    auth: CallsWrite,
    _json: JsonContent,
    body: CallComplete,
    db: DB,
) -> JSONResponse:
    async with db.begin() as conn:
        call = await domain.complete_call(
            conn,
            auth.account_id,
            call_id,
            body.call_status,
            body.call_ended_at,
            body.analysis.model_dump(exclude_unset=True) if body.analysis is not None else None,
        )
    if call is None:
        raise _not_found(call_id)
    return JSONResponse(call)


@router.post(
    "/{call_id}/analysis",
    response_model=CallOut,
    responses=error_responses(400, 401, 403, 404, 409, 413, 415, 422),
    summary="Record a call's structured outcome (fires call.analyzed)",
    description='The body is the outcome object itself (e.g. `{"budget": 5}`), validated '
    "against the account's call analysis schema (422 naming each field's path). It is stored "
    "as `analysis.outcome` with `analysis.outcome_schema_version`. A 409 while the call is in "
    "progress, when the server ended it (`timed-out`), or when it has an outcome already.",
)
async def analyze_call(
    call_id: str,
    auth: CallsWrite,
    _json: JsonContent,
    body: Outcome,
    db: DB,
) -> JSONResponse:
    async with db.begin() as conn:
        call = await domain.analyze_call(conn, auth.account_id, call_id, body.root)
    if call is None:
        raise _not_found(call_id)
    return JSONResponse(call)
