"""Calls and events: read-only, filterable, paginated lists and detail pages."""

from __future__ import annotations

from typing import Any, get_args

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from hookline.dashboard.listing import PAGE_SIZE, cursor_id, paginate
from hookline.dashboard.sessions import CurrentSession
from hookline.dashboard.web import PREFIX, database, not_found, redirect, render
from hookline.domain import calls as calls_domain
from hookline.domain import contacts as contacts_domain
from hookline.domain import events as events_domain
from hookline.schemas.calls import CallStatus, CallType

router = APIRouter(prefix=PREFIX)
CALL_STATUSES = get_args(CallStatus)
CALL_TYPES = get_args(CallType)
EVENT_TYPES = (*events_domain.EVENT_TYPES, events_domain.TEST_EVENT_TYPE)


def _one_of(value: str, allowed: tuple[str, ...]) -> str | None:
    # An unknown filter value shows everything rather than an error: it came from a URL.
    return value if value in allowed else None


@router.get("/calls")
async def list_calls(
    request: Request,
    session: CurrentSession,
    status: str = "",
    type: str = "",
    contact_id: str = "",
    cursor: str | None = None,
) -> HTMLResponse:
    filters = calls_domain.CallFilters(
        contact_id=contact_id.strip() or None,
        call_status=_one_of(status, CALL_STATUSES),
        call_type=_one_of(type, CALL_TYPES),
    )
    async with database(request).read() as conn:
        rows = await calls_domain.list_calls(
            conn, session.account_id, filters, limit=PAGE_SIZE + 1, before_id=cursor_id(cursor)
        )
    rows, next_url = paginate(request, rows)
    context = {
        "calls": rows,
        "next_url": next_url,
        "first_page": cursor is None,
        "status": status,
        "type": type,
        "contact_id": contact_id,
        "statuses": CALL_STATUSES,
        "types": CALL_TYPES,
    }
    return render(request, "calls.html", context)


@router.get("/calls/{call_id}")
async def show_call(request: Request, session: CurrentSession, call_id: str) -> HTMLResponse:
    async with database(request).read() as conn:
        call = await calls_domain.get_call(conn, session.account_id, call_id)
        if call is None:
            raise not_found("call")
        contact = (
            await contacts_domain.get_contact(conn, session.account_id, call["contact_id"])
            if call["contact_id"]
            else None
        )
    metadata = _indented(call["metadata"])
    analysis = call["analysis"] or {}
    outcome = analysis.get("outcome")
    context = {
        "call": call,
        "contact": contact,
        "metadata": metadata,
        "outcome": None if outcome is None else _indented(outcome),
        "outcome_version": analysis.get("outcome_schema_version"),
    }
    return render(request, "call_detail.html", context)


def _indented(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


@router.get("/events")
async def list_events(
    request: Request,
    session: CurrentSession,
    type: str = "",
    search: str = "",
    cursor: str | None = None,
) -> Response:
    wanted = search.strip()
    if wanted.startswith("evt_"):
        # Looking for one event (e.g. the webhook-id a receiver logged): go straight to it.
        return redirect(request, f"{PREFIX}/events/{wanted}", status_code=302)
    async with database(request).read() as conn:
        rows = await events_domain.list_events(
            conn,
            session.account_id,
            limit=PAGE_SIZE + 1,
            before_id=cursor_id(cursor),
            event_type=_one_of(type, EVENT_TYPES),
        )
    rows, next_url = paginate(request, rows)
    context = {
        "events": rows,
        "next_url": next_url,
        "first_page": cursor is None,
        "type": type,
        "search": search,
        "types": EVENT_TYPES,
        "visible_days": events_domain.VISIBLE_DAYS,
    }
    return render(request, "events.html", context)


@router.get("/events/{event_id}")
async def show_event(request: Request, session: CurrentSession, event_id: str) -> HTMLResponse:
    async with database(request).read() as conn:
        event = await events_domain.get_event(conn, session.account_id, event_id)
    if event is None:
        raise not_found("event")
    payload = orjson.dumps(event, option=orjson.OPT_INDENT_2).decode()
    return render(request, "event_detail.html", {"event": event, "payload": payload})
