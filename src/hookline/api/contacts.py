"""``/v1/contacts``: create, read, list, merge-patch, delete."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.responses import StreamingResponse

from hookline.api.deps import DB, ContactsRead, ContactsWrite, JsonContent
from hookline.api.openapi import error_responses
from hookline.api.pagination import (
    CursorQuery,
    LimitQuery,
    OffsetQuery,
    decode_cursor,
    page_response,
    skipped,
)
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute, body_limit
from hookline.domain import contacts as domain
from hookline.domain import contacts_bulk
from hookline.domain.validation import PHONE_PATTERN, normalize_phone
from hookline.errors import NotFound, ValidationFailed
from hookline.schemas.common import SuccessOut
from hookline.schemas.contacts import (
    ContactCreate,
    ContactOut,
    ContactsBulk,
    ContactsBulkOut,
    ContactUpdate,
    bulk_row,
)
from hookline.schemas.contacts_csv import export_csv

router = APIRouter(prefix="/v1/contacts", tags=["contacts"], route_class=DirectRoute)


def _not_found(contact_id: str) -> NotFound:
    return NotFound(f"No contact with id {contact_id}.")


@router.post(
    "",
    status_code=201,
    response_model=ContactOut,
    responses=error_responses(400, 401, 403, 413, 415, 422),
    summary="Create a contact (fires contact.created)",
)
async def create_contact(
    auth: ContactsWrite, _json: JsonContent, body: ContactCreate, db: DB
) -> JSONResponse:
    # The contact and its contact.created event, committed together (docs/architecture.md).
    contact, rows = domain.contact_creation(auth.account_id, body.provided())
    await db.commit_rows(rows)
    return JSONResponse(
        contact, status_code=201, headers={"Location": f"/v1/contacts/{contact['id']}"}
    )


BULK_BODY_BYTES = 2 * 1024 * 1024


@router.post(
    "/bulk",
    response_model=ContactsBulkOut,
    responses=error_responses(400, 401, 403, 413, 415, 422),
    summary="Create or update up to 1,000 contacts, matched by phone number or email",
    description="Each row gets a result in `results`, in order: `created`, `updated`, "
    "`unchanged` (nothing to change: no event) or `refused` (with `error` naming the field, as "
    "a 422 would). A row whose `match_on` field is missing, or matches several contacts, is "
    "refused. Rows are written in transactions of at most 25: each batch is atomic, the "
    "request is not, and sending the same rows again is safe (they come back `unchanged`). "
    "The body may be up to 2 MiB.",
)
@body_limit(BULK_BODY_BYTES)
async def bulk_upsert_contacts(
    auth: ContactsWrite, _json: JsonContent, body: ContactsBulk, db: DB
) -> JSONResponse:
    match_on = body.match_on
    results = await contacts_bulk.upsert_contacts(
        db, auth.account_id, match_on, body.contacts, partial(bulk_row, match_on=match_on)
    )
    return JSONResponse({"results": results})


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        **error_responses(401, 403),
    },
    summary="Every contact of the account as CSV, newest first",
    description="A header row, then one row per contact with the contact object's fields as "
    "columns: `tags` joined with `;`, booleans `true`/`false`, null as an empty cell. A cell "
    "that starts with `=`, `+`, `-`, `@`, tab or CR gets a leading `'` (OWASP's CSV injection "
    "rule), so phone numbers read `'+14155552671`. Streamed as it is read, page by page.",
)
async def export_contacts(auth: ContactsRead, db: DB) -> StreamingResponse:
    return StreamingResponse(
        export_csv(db, auth.account_id),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="contacts.csv"'},
    )


@router.get(
    "",
    response_model=list[ContactOut],
    responses=error_responses(401, 403, 422),
    summary="List contacts, newest first",
)
async def list_contacts(
    request: Request,
    auth: ContactsRead,
    db: DB,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
    offset: OffsetQuery = None,
    search: Annotated[str | None, Query(max_length=200)] = None,
    tags: Annotated[str | None, Query(description="Comma-separated; all must match.")] = None,
    phone_number: Annotated[str | None, Query(json_schema_extra={"pattern": PHONE_PATTERN})] = None,
    email: Annotated[str | None, Query(max_length=254)] = None,
    do_not_call: Annotated[Literal["true", "false"] | None, Query()] = None,
) -> JSONResponse:
    filters = domain.ContactFilters(
        search=search.strip() if search else None,
        tags=tuple(t.strip() for t in tags.split(",") if t.strip()) if tags else (),
        phone_number=_phone_filter(phone_number),
        email=email.strip().lower() if email else None,
        do_not_call=None if do_not_call is None else do_not_call == "true",
    )
    async with db.read() as conn:
        found = await domain.contacts_page(
            conn,
            auth.account_id,
            filters,
            limit=limit,
            before_id=decode_cursor(cursor),
            offset=skipped(cursor, offset),
        )
    return page_response(request, found.items, limit, found.last_id)


def _phone_filter(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return normalize_phone(value)
    except ValueError as exc:
        raise ValidationFailed.for_field("phone_number", str(exc)) from None


@router.get(
    "/{contact_id}",
    response_model=ContactOut,
    responses=error_responses(401, 403, 404),
    summary="Get a contact",
)
async def get_contact(contact_id: str, auth: ContactsRead, db: DB) -> JSONResponse:
    contact = await domain.get_contact(db, auth.account_id, contact_id)
    if contact is None:
        raise _not_found(contact_id)
    return JSONResponse(contact)


@router.patch(
    "/{contact_id}",
    response_model=ContactOut,
    responses=error_responses(400, 401, 403, 404, 413, 415, 422),
    summary="Update a contact with JSON merge-patch (fires contact.updated when changed)",
)
async def update_contact(
    contact_id: str,
    auth: ContactsWrite,
    _json: JsonContent,
    body: ContactUpdate,
    db: DB,
) -> JSONResponse:
    async with db.begin() as conn:
        contact = await domain.update_contact(conn, auth.account_id, contact_id, body.provided())
    if contact is None:
        raise _not_found(contact_id)
    return JSONResponse(contact)


@router.delete(
    "/{contact_id}",
    response_model=SuccessOut,
    responses=error_responses(401, 403, 404),
    summary="Delete a contact (fires contact.deleted)",
)
async def delete_contact(contact_id: str, auth: ContactsWrite, db: DB) -> JSONResponse:
    async with db.begin() as conn:
        contact = await domain.delete_contact(conn, auth.account_id, contact_id)
    if contact is None:
        raise _not_found(contact_id)
    return JSONResponse({"success": True, "message": f"Contact {contact_id} deleted"})
