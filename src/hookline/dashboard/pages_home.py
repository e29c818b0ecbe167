"""The overview: where a new user sees what to do next, step by step."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from hookline.dashboard.people import account_name
from hookline.dashboard.sessions import CurrentSession, optional_session
from hookline.dashboard.web import PREFIX, database, not_found, redirect, render
from hookline.domain import contacts, events, keys, webhooks

router = APIRouter(prefix=PREFIX)


@router.get("")
async def overview(request: Request, session: CurrentSession) -> HTMLResponse:
    async with database(request).read() as conn:
        live_keys = [
            k for k in await keys.list_keys(conn, session.account_id) if not k["revoked_at"]
        ]
        hooks = await webhooks.list_webhooks(conn, session.account_id)
        some_contacts = await contacts.list_contacts(
            conn, session.account_id, contacts.ContactFilters(), limit=1
        )
        recent_events = await events.list_events(conn, session.account_id, limit=5)
    context = {
        "key_count": len(live_keys),
        "webhook_count": len(hooks),
        "active_webhooks": sum(1 for h in hooks if h["is_active"]),
        "disabled_webhooks": [h for h in hooks if h["disabled_reason"]],
        "has_contacts": bool(some_contacts),
        "recent_events": recent_events,
        "base_url": str(request.base_url).rstrip("/"),
    }
    return render(request, "overview.html", context)


@router.get("/settings")
async def settings(request: Request, session: CurrentSession) -> HTMLResponse:
    """The account's id (what `hookline users add --account` and support ask for) and name."""
    async with database(request).read() as conn:
        name = await account_name(conn, session.account_id)
    context = {"account_id": session.account_id, "account_name": name}
    return render(request, "settings.html", context)


@router.get("/")
async def trailing_slash(request: Request) -> RedirectResponse:
    return redirect(request, PREFIX, status_code=307)


@router.api_route("/{rest:path}", methods=["GET", "POST"])
async def unknown_page(request: Request, rest: str) -> None:
    await optional_session(request)  # so the 404 page keeps the signed-in navigation
    # Registered last: any other /dashboard path is an HTML 404, not the API's JSON one.
    raise not_found("page")
