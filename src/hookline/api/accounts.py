"""``/v1/account``: the account's settings (``retention_days``, ``max_call_seconds``)."""

from __future__ import annotations

from fastapi import APIRouter

from hookline.api.deps import DB, AnyKey, CallsWrite, JsonContent
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain import accounts as domain
from hookline.schemas.accounts import AccountOut, AccountUpdate

router = APIRouter(prefix="/v1/account", tags=["account"], route_class=DirectRoute)


@router.get(
    "",
    response_model=AccountOut,
    responses=error_responses(401),
    summary="The key's account and its settings",
)
async def get_account(auth: AnyKey, db: DB) -> JSONResponse:
    async with db.read() as conn:
        return JSONResponse(await domain.get_account(conn, auth.account_id))


@router.patch(
    "",
    response_model=AccountOut,
    responses=error_responses(400, 401, 403, 413, 415, 422),
    summary="Change the account's settings",
    description="Absent fields are unchanged; `null` is refused. A new "
    "`max_call_seconds` applies to calls started after the change.",
)
async def update_account(
    auth: CallsWrite, _json: JsonContent, body: AccountUpdate, db: DB
) -> JSONResponse:
    async with db.begin() as conn:
        account = await domain.update_account(conn, auth.account_id, body.provided())
    return JSONResponse(account)
