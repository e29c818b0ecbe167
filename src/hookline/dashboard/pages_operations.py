"""A webhook's statistics and outcomes chart (on its page), and "Recover…": choose a window,
see how many deliveries it will queue, then queue them.

The chart is an SVG drawn on the server: no script, no asset from anywhere, and the strict CSP
(``web.SECURITY_HEADERS``) holds, since SVG presentation attributes are not inline styles.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import ValidationError

from hookline import mail
from hookline.dashboard.csrf import CheckedForm
from hookline.dashboard.listing import field_errors, text
from hookline.dashboard.sessions import CurrentSession
from hookline.dashboard.web import PREFIX, Flash, database, not_found, redirect, render
from hookline.domain import recovery as recovery_domain
from hookline.domain import webhook_stats as stats
from hookline.domain import webhooks as domain
from hookline.domain.operations import DEFAULT_STATS_WINDOW, checked_window
from hookline.errors import ValidationFailed
from hookline.schemas.operations import RecoverIn
from hookline.settings import Settings
from hookline.storage.connector import Connection
from hookline.timeutil import iso, utcnow

router = APIRouter(prefix=f"{PREFIX}/webhooks")

CHART_WIDTH = 600
CHART_HEIGHT = 120
# datetime-local inputs have no zone: the page says they are UTC.
PICKER_FORMAT = "%Y-%m-%dT%H:%M"


@dataclass(frozen=True)
class ChartBar:
    x: float
    width: float
    ok_y: float
    ok_height: float
    bad_y: float
    bad_height: float
    label: str


@dataclass(frozen=True)
class ChartAxes:
    """What the chart's axes say: the top of the scale, the bars' unit, the window's ends."""

    top: int
    unit: str
    start: str
    end: str


def chart_axes(bars: list[stats.Bar], window: timedelta) -> ChartAxes:
    """The y scale runs from 0 to the tallest bar (1 when there is none); each bar counts the
    attempts of its span, which the unit names."""
    tallest = max((b.succeeded + b.failed for b in bars), default=0) or 1
    span = bars[1].start - bars[0].start if len(bars) > 1 else window
    return ChartAxes(tallest, f"attempts per {_spelled(span)}", f"{_spelled(window)} ago", "now")


def _spelled(span: timedelta) -> str:
    """``hour``, ``2 hours``, ``minute``, ``24 hours``: a span in the largest whole unit."""
    seconds = int(span.total_seconds())
    for size, unit in ((3600, "hour"), (60, "minute"), (1, "second")):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return unit if count == 1 else f"{count} {unit}s"
    return f"{span.total_seconds():g} seconds"


def chart_bars(bars: list[stats.Bar]) -> list[ChartBar]:
    """SVG geometry of the outcomes chart: succeeded (bottom) and failed (on top) per bar."""
    tallest = max((b.succeeded + b.failed for b in bars), default=0) or 1
    slot = CHART_WIDTH / max(1, len(bars))
    out = []
    for i, bar in enumerate(bars):
        ok = CHART_HEIGHT * bar.succeeded / tallest
        bad = CHART_HEIGHT * bar.failed / tallest
        out.append(
            ChartBar(
                x=round(i * slot + 1, 1),
                width=round(max(1.0, slot - 2), 1),
                ok_y=round(CHART_HEIGHT - ok, 1),
                ok_height=round(ok, 1),
                bad_y=round(CHART_HEIGHT - ok - bad, 1),
                bad_height=round(bad, 1),
                label=f"{iso(bar.start)}: {bar.succeeded} succeeded, {bar.failed} failed",
            )
        )
    return out


async def webhook_health(conn: Connection, webhook_id: str, settings: Settings) -> dict[str, Any]:
    """The webhook page's statistics (the last 24 hours, as the API's default) and chart, and
    whether a disable was mailed to the account's people."""
    until = utcnow()
    since = until - DEFAULT_STATS_WINDOW
    figures = await stats.webhook_stats(conn, webhook_id, since, until)
    bars = await stats.outcome_series(conn, webhook_id, since, until)
    return {
        "stats": figures,
        "chart": chart_bars(bars),
        "chart_axes": chart_axes(bars, DEFAULT_STATS_WINDOW),
        "chart_size": (CHART_WIDTH, CHART_HEIGHT),
        "mail_notice": None if mail.is_configured(settings) else mail.NOT_CONFIGURED_NOTICE,
    }


def _url(webhook_id: str, suffix: str = "") -> str:
    return f"{PREFIX}/webhooks/{webhook_id}{suffix}"


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _picker_to_iso(value: str) -> str | None:
    """A datetime-local value (UTC, no zone) as ISO 8601 with Z; other text is passed on for
    the schema to refuse."""
    if not value:
        return None
    try:
        return iso(datetime.strptime(value, PICKER_FORMAT).replace(tzinfo=UTC))
    except ValueError:
        return value


REPLAY_STATUSES = ("failed", "cancelled", "missed", "succeeded")


def _filter_values(source: Any) -> dict[str, Any]:
    """The recovery form's filter fields as typed (query string or posted form)."""
    statuses = [s for s in source.getlist("statuses") if s in REPLAY_STATUSES]
    return {
        "event_types": text(source, "event_types"),
        "object_id": text(source, "object_id"),
        "statuses": statuses or list(recovery_domain.DEFAULT_STATUSES),
        "backfill": text(source, "backfill") == "on",
    }


def _window(
    request: Request, since: str, until: str, filters: dict[str, Any] | None = None
) -> tuple[recovery_domain.RecoveryWindow, recovery_domain.ReplayFilter]:
    filters = filters or _filter_values(request.query_params)
    types = [t.strip() for t in filters["event_types"].split(",") if t.strip()]
    body = RecoverIn.model_validate(
        {
            "since": _picker_to_iso(since),
            "until": _picker_to_iso(until),
            "event_types": types or None,
            "object_id": filters["object_id"] or None,
            "statuses": filters["statuses"],
            "backfill": filters["backfill"],
        }
    )
    window = checked_window(
        body.since, body.until, now=utcnow(), retention_days=_settings(request).retention_days
    )
    return window, body.replay_filter()


def _form_page(
    request: Request,
    webhook: dict[str, Any],
    values: dict[str, str],
    *,
    count: int | None = None,
    errors: dict[str, str] | None = None,
) -> HTMLResponse:
    context = {
        "webhook": webhook,
        "values": values,
        "count": count,
        "errors": errors or {},
        "replay_statuses": REPLAY_STATUSES,
        "retention_days": _settings(request).retention_days,
    }
    return render(request, "webhook_recover.html", context, status_code=422 if errors else 200)


@router.get("/{webhook_id}/recover")
async def recover_form(
    request: Request, session: CurrentSession, webhook_id: str, since: str = "", until: str = ""
) -> HTMLResponse:
    """Step 1: pick a window; with one, step 2: how many deliveries it will queue."""
    async with database(request).read() as conn:
        webhook = await domain.get_webhook(conn, session.account_id, webhook_id)
        if webhook is None:
            raise not_found("webhook")
        filters = _filter_values(request.query_params)
        if not since:
            start = (utcnow() - timedelta(hours=24)).strftime(PICKER_FORMAT)
            return _form_page(request, webhook, {"since": start, "until": until, **filters})
        values = {"since": since, "until": until, **filters}
        try:
            window, wanted = _window(request, since, until, filters)
        except (ValidationError, ValidationFailed) as exc:
            return _form_page(request, webhook, values, errors=field_errors(exc))
        count = await recovery_domain.count_recoverable(
            conn, session.account_id, webhook_id, window, wanted
        )
    return _form_page(request, webhook, values, count=count)


@router.post("/{webhook_id}/recover")
async def recover(
    request: Request, session: CurrentSession, form: CheckedForm, webhook_id: str
) -> Response:
    since, until = text(form, "since"), text(form, "until")
    filters = _filter_values(form)
    try:
        window, wanted = _window(request, since, until, filters)
    except (ValidationError, ValidationFailed) as exc:
        async with database(request).read() as conn:
            webhook = await domain.get_webhook(conn, session.account_id, webhook_id)
        if webhook is None:
            raise not_found("webhook") from None
        values = {"since": since, "until": until, **filters}
        return _form_page(request, webhook, values, errors=field_errors(exc))
    try:
        queued = await recovery_domain.recover(
            database(request), session.account_id, webhook_id, window, wanted
        )
    except recovery_domain.WebhookNotActive:
        flash = Flash("error", "This webhook is disabled: enable it first, then recover.")
        return redirect(request, _url(webhook_id), flash)
    if queued is None:
        raise not_found("webhook")
    flash = Flash("success", f"Recovery queued {queued} deliveries; they appear below as they go.")
    return redirect(request, _url(webhook_id), flash)
