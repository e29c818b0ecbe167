"""``POST /v1/webhooks/{id}/conformance``: the receiver check (``delivery.conformance``)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel

from hookline.api.deps import DB, AppSettings, WebhooksWrite
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.crypto import SecretBox
from hookline.delivery.conformance import check_receiver
from hookline.delivery.sender import Sender
from hookline.domain.webhooks import probe_target
from hookline.errors import NotFound
from hookline.settings import Settings

router = APIRouter(prefix="/v1/webhooks/{webhook_id}", tags=["webhooks"], route_class=DirectRoute)


class CheckOut(BaseModel):
    name: Literal["valid", "bad_signature", "stale_timestamp", "tampered_body", "duplicate_id"]
    passed: bool
    status_code: int | None
    detail: str


class ConformanceOut(BaseModel):
    passed: bool
    checks: list[CheckOut]


async def run_check(
    settings: Settings, db: DB, box: SecretBox, account_id: str, webhook_id: str
) -> dict[str, object]:
    """The report for one of the account's webhooks; shared with the dashboard."""
    async with db.read() as conn:
        target = await probe_target(conn, account_id, webhook_id, box=box)
    if target is None:
        raise NotFound(f"No webhook with id {webhook_id}.")
    sender = Sender(settings)
    await sender.start()
    try:
        return await check_receiver(sender, target)
    finally:
        await sender.close()


@router.post(
    "/conformance",
    response_model=ConformanceOut,
    responses=error_responses(401, 403, 404),
    summary="Check the receiver: does it verify signatures, timestamps and bodies?",
    description="Sends, within 30 s, `webhook.conformance` probes to the webhook's URL (the "
    "SSRF rules apply): `valid` (expects 2xx), `bad_signature`, `stale_timestamp` (10 min "
    "old) and `tampered_body` (each expects a non-2xx) and `duplicate_id` (the valid one "
    "again; expects 2xx). Probes are not deliveries and never count toward auto-disable.",
)
async def check_conformance(
    request: Request, webhook_id: str, auth: WebhooksWrite, db: DB, settings: AppSettings
) -> JSONResponse:
    box: SecretBox = request.app.state.secret_box
    report = await run_check(settings, db, box, auth.account_id, webhook_id)
    return JSONResponse(report)
