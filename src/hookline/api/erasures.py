"""``POST /v1/contacts/{id}/erase`` and ``GET /v1/erasures/{id}``: erasing a contact's data."""

from __future__ import annotations

from fastapi import APIRouter

from hookline.api.deps import DB, ContactsRead, ContactsWrite
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain import erasures as domain
from hookline.errors import NotFound
from hookline.schemas.erasures import ErasureAccepted, ErasureOut

router = APIRouter(tags=["contacts"], route_class=DirectRoute)


@router.post(
    "/v1/contacts/{contact_id}/erase",
    status_code=202,
    response_model=ErasureAccepted,
    responses=error_responses(401, 403, 404),
    summary="Erase a contact and its data everywhere (fires contact.erased when done)",
    description="Deletes the contact at once; a background job then removes its data from its "
    "calls, every event and delivery attempt about it and stored idempotent responses, and "
    "sends `contact.erased` to each webhook that received any of it. Erasing again answers "
    "the same erasure. A contact deleted earlier can still be erased.",
)
async def erase_contact(contact_id: str, auth: ContactsWrite, db: DB) -> JSONResponse:
    async with db.begin() as conn:
        erasure_id = await domain.request_erasure(conn, auth.account_id, contact_id)
    if erasure_id is None:
        # No such contact now: one deleted earlier still has its events to erase. Looked for
        # in a read, so the scan never holds a write transaction.
        async with db.read() as conn:
            existed = await domain.had_contact(conn, auth.account_id, contact_id)
        if not existed:
            raise NotFound(f"No contact with id {contact_id}.")
        async with db.begin() as conn:
            erasure_id = await domain.request_erasure(
                conn, auth.account_id, contact_id, deleted_before=True
            )
    return JSONResponse({"erasure_id": erasure_id}, status_code=202)


@router.get(
    "/v1/erasures/{erasure_id}",
    response_model=ErasureOut,
    responses=error_responses(401, 403, 404),
    summary="An erasure's progress, and what each webhook acknowledged",
)
async def get_erasure(erasure_id: str, auth: ContactsRead, db: DB) -> JSONResponse:
    async with db.read() as conn:
        erasure = await domain.get_erasure(conn, auth.account_id, erasure_id)
    if erasure is None:
        raise NotFound(f"No erasure with id {erasure_id}.")
    return JSONResponse(erasure)
