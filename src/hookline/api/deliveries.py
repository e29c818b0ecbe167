"""``/v1/webhooks/{id}/deliveries`` and ``/test``: what was sent, and sending again."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from hookline.api.deps import DB, WebhooksRead, WebhooksWrite, require_json
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
from hookline.api.routing import DirectRoute, validate_body
from hookline.domain import deliveries
from hookline.domain.webhooks import get_webhook
from hookline.errors import Conflict, NotFound, ValidationFailed
from hookline.schemas import catalogue
from hookline.schemas.deliveries import (
    DeliveryDetailOut,
    DeliveryOut,
    DeliveryStatus,
    TestEventOut,
)
from hookline.storage.connector import Connection
from hookline.timeutil import utcnow

router = APIRouter(prefix="/v1/webhooks/{webhook_id}", tags=["deliveries"], route_class=DirectRoute)


async def _webhook_or_404(conn: Connection, account_id: str, webhook_id: str) -> Any:
    webhook = await get_webhook(conn, account_id, webhook_id)
    if webhook is None:
        raise NotFound(f"No webhook with id {webhook_id}.")
    return webhook


async def _optional_test_request(request: Request) -> catalogue.EventKind | None:
    """The example the body asks for, or None without a body (a plain ``webhook.test``)."""
    raw = await request.body()
    if not raw:
        return None
    await require_json(request)
    body = validate_body(catalogue.TestEventRequest, raw)
    assert isinstance(body, catalogue.TestEventRequest)
    kind = catalogue.kind_of(body.event_type)
    if kind is None:
        known = ", ".join(k.event_type for k in catalogue.catalogue())
        raise ValidationFailed.for_field("event_type", f"event_type must be one of {known}")
    return kind


def _delivery_not_found(delivery_id: str) -> NotFound:
    return NotFound(f"No delivery with id {delivery_id} for this webhook.")


@router.get(
    "/deliveries",
    response_model=list[DeliveryOut],
    responses=error_responses(401, 403, 404),
    summary="List a webhook's deliveries, newest first",
)
async def list_deliveries(
    request: Request,
    webhook_id: str,
    auth: WebhooksRead,
    db: DB,
    limit: LimitQuery = 50,
    cursor: CursorQuery = None,
    offset: OffsetQuery = None,
    status: Annotated[DeliveryStatus | None, Query()] = None,
) -> JSONResponse:
    async with db.read() as conn:
        await _webhook_or_404(conn, auth.account_id, webhook_id)
        rows, next_cursor = await deliveries.list_deliveries(
            conn,
            auth.account_id,
            webhook_id,
            limit=limit,
            cursor=decode_cursor(cursor),
            offset=skipped(cursor, offset),
            status=status,
        )
    return page_response(request, rows, limit, next_cursor)


@router.get(
    "/deliveries/{delivery_id}",
    response_model=DeliveryDetailOut,
    responses=error_responses(401, 403, 404),
    summary="A delivery with every attempt (response bodies cut to 4 KiB)",
)
async def get_delivery(
    webhook_id: str, delivery_id: str, auth: WebhooksRead, db: DB
) -> JSONResponse:
    async with db.read() as conn:
        delivery = await deliveries.get_delivery(conn, auth.account_id, webhook_id, delivery_id)
    if delivery is None:
        raise _delivery_not_found(delivery_id)
    return JSONResponse(delivery)


@router.post(
    "/deliveries/{delivery_id}/retry",
    status_code=202,
    response_model=DeliveryOut,
    responses=error_responses(401, 403, 404),
    summary="Send a delivery again now, whatever its state",
)
async def retry_delivery(
    webhook_id: str, delivery_id: str, auth: WebhooksWrite, db: DB
) -> JSONResponse:
    async with db.begin() as conn:
        delivery = await deliveries.retry_delivery(
            conn, auth.account_id, webhook_id, delivery_id, now=utcnow()
        )
    if delivery is None:
        raise _delivery_not_found(delivery_id)
    return JSONResponse(delivery, status_code=202)


@router.post(
    "/test",
    status_code=202,
    response_model=TestEventOut,
    responses=error_responses(400, 401, 403, 404, 409, 415),
    summary="Send a webhook.test event, or an example of any type, to this webhook alone",
    description='Without a body, a `webhook.test` event. With `{"event_type": T}`, an example '
    "event of type T (example data from `GET /v1/event-types`, a real signature), whatever the "
    "webhook subscribes to and whatever its filter says. A test send counts against the "
    "webhook's `rate_limit` when asked for: with the window used up, 429 `rate_limited` with "
    "`Retry-After` (seconds until it has room).",
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {
                "application/json": {"schema": catalogue.TestEventRequest.model_json_schema()}
            },
        }
    },
)
async def send_test_event(
    request: Request, webhook_id: str, auth: WebhooksWrite, db: DB
) -> JSONResponse:
    wanted = await _optional_test_request(request)
    async with db.begin() as conn:
        webhook = await _webhook_or_404(conn, auth.account_id, webhook_id)
        if not webhook["is_active"]:
            raise Conflict("This webhook is inactive; enable it to send a test event.")
        example = None
        if wanted is not None:
            previous = catalogue.example_previous_attributes(wanted.event_type)
            example = (wanted.event_type, wanted.example, previous)
        event_id = await deliveries.insert_test_event(conn, auth.account_id, webhook_id, example)
    return JSONResponse(
        {"event_id": event_id, "message": f"Test event {event_id} queued for {webhook_id}"},
        status_code=202,
    )
