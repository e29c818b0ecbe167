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
from hookline.domain.conformance import run_check

router = APIRouter(prefix="/v1/webhooks/{webhook_id}", tags=["webhooks"], route_class=DirectRoute)


class CheckOut(BaseModel):
    name: Literal[
        "valid",
        "bad_signature",
        "stale_timestamp",
        "tampered_body",
        "duplicate_id",
        "auth_enforced",
    ]
    passed: bool
    status_code: int | None
    detail: str


class ConformanceOut(BaseModel):
    passed: bool
    checks: list[CheckOut]


@router.post(
    "/conformance",
    response_model=ConformanceOut,
    responses=error_responses(401, 403, 404),
    summary="Check the receiver: does it verify signatures, timestamps and bodies?",
    description="Sends, within 30 s, `webhook.conformance` probes to the webhook's URL (the "
    "SSRF rules apply): `valid` (expects 2xx), `bad_signature`, `stale_timestamp` (10 min "
    "old) and `tampered_body` (each expects a non-2xx) and `duplicate_id` (the valid one "
    "again; expects 2xx); a webhook with `auth` also gets `auth_enforced` (the valid one "
    "without its OAuth2 token; expects a non-2xx). Probes are not deliveries and never count "
    "toward auto-disable. A webhook takes one check per 10 s, and its probes count against "
    "its `rate_limit` (paced to fit it); a check asked for sooner, or while the window has no "
    "room, is 429 `rate_limited` with `Retry-After` (seconds until it would be taken).",
)
async def check_conformance(
    request: Request, webhook_id: str, auth: WebhooksWrite, db: DB, settings: AppSettings
) -> JSONResponse:
    box: SecretBox = request.app.state.secret_box
    report = await run_check(settings, db, box, auth.account_id, webhook_id)
    return JSONResponse(report)
