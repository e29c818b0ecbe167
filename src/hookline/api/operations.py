"""``/v1/webhooks/{id}/recover`` and ``/stats``: what an operator needs after an outage."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Query, Request

from hookline.api.deps import (
    DB,
    AppSettings,
    JsonContent,
    WebhooksRead,
    WebhooksWrite,
)
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.domain import recovery as recovery_domain
from hookline.domain.operations import DEFAULT_STATS_WINDOW, checked_window
from hookline.domain.webhook_stats import webhook_stats
from hookline.domain.webhooks import get_webhook
from hookline.errors import Conflict, NotFound
from hookline.schemas.common import Since, Until
from hookline.schemas.operations import RecoverCountOut, RecoverIn, RecoverOut, StatsOut
from hookline.timeutil import utcnow

router = APIRouter(prefix="/v1/webhooks/{webhook_id}", tags=["webhooks"], route_class=DirectRoute)


def _not_found(webhook_id: str) -> NotFound:
    return NotFound(f"No webhook with id {webhook_id}.")


@router.post(
    "/recover",
    status_code=202,
    response_model=RecoverOut,
    responses={
        200: {"model": RecoverCountOut, "description": "`dry_run`: the count; nothing queued."},
        **error_responses(400, 401, 403, 404, 409, 413, 415, 422),
    },
    summary="Send again what a webhook missed in a window of time",
    description="For events created in [`since`, `until`] (`until` defaults to now; `since` "
    "within retention; never before the webhook was created): every failed or cancelled "
    "delivery is scheduled again (same `webhook-id`), and every event of a type the webhook "
    "subscribes to now that has no delivery to it gets one. Nothing that succeeded or is "
    "pending is touched, so a second identical call queues nothing new. The webhook must be "
    "active (409 otherwise). Large windows are processed in batches; the answer comes when "
    "every delivery is queued. Narrow it with `event_types`, `object_id` and `statuses` "
    "(`succeeded` replays what was delivered); `backfill` lets the window reach before the "
    "webhook existed; `dry_run` answers 200 with the count and queues nothing.",
)
async def recover(
    request: Request,
    webhook_id: str,
    auth: WebhooksWrite,
    _json: JsonContent,
    body: RecoverIn,
    db: DB,
    settings: AppSettings,
) -> JSONResponse:
    window = checked_window(
        body.since, body.until, now=utcnow(), retention_days=settings.retention_days
    )
    wanted = body.replay_filter()
    if body.dry_run:
        async with db.read() as conn:
            count = await recovery_domain.count_recoverable(
                conn, auth.account_id, webhook_id, window, wanted
            )
        if count is None:
            raise _not_found(webhook_id)
        return JSONResponse({"would_queue": count})
    # A task of its own: its batches commit one by one, each a short transaction. In this task,
    # with an Idempotency-Key, every write would join the request's one transaction (the key's
    # reservation and stored response commit with it), and a 100,000-event window would hold
    # SQLite's single writer until the end. The key is stored once the recovery is done; a
    # retry after a crash half-way queues what is left. Shielded: a client that hangs up does
    # not stop a recovery half-way.
    recovery = asyncio.get_running_loop().create_task(
        recovery_domain.recover(db, auth.account_id, webhook_id, window, wanted)
    )
    # Referenced until done (the app awaits these at shutdown), as ``background.spawn`` does.
    running: set[asyncio.Task[Any]] = request.app.state.background_tasks
    running.add(recovery)
    recovery.add_done_callback(running.discard)
    try:
        queued = await asyncio.shield(recovery)
    except recovery_domain.WebhookNotActive:
        raise Conflict("This webhook is inactive; enable it before recovering.") from None
    if queued is None:
        raise _not_found(webhook_id)
    return JSONResponse({"queued": queued}, status_code=202)


@router.get(
    "/stats",
    response_model=StatsOut,
    responses=error_responses(401, 403, 404, 422),
    summary="Delivery statistics of a webhook over a window (default: the last 24 hours)",
    description="`attempts`, `succeeded` and `failed` count attempts started in [`since`, "
    "`until`); latency percentiles come from a histogram with 5% bins (exact below 32 ms). "
    "`pending` counts deliveries waiting now.",
)
async def stats(
    webhook_id: str,
    auth: WebhooksRead,
    db: DB,
    settings: AppSettings,
    since: Since | None = Query(default=None),
    until: Until | None = Query(default=None),
) -> JSONResponse:
    now = utcnow()
    end = min(until, now) if until is not None else now
    if since is None:
        since = max(end - DEFAULT_STATS_WINDOW, now - timedelta(days=settings.retention_days))
    window = checked_window(since, end, now=now, retention_days=settings.retention_days)
    async with db.read() as conn:
        if await get_webhook(conn, auth.account_id, webhook_id) is None:
            raise _not_found(webhook_id)
        figures = await webhook_stats(conn, webhook_id, window.since, window.until)
    return JSONResponse(figures)
