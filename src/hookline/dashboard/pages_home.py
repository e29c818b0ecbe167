"""The overview: where a new user sees what to do next, step by step."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from hookline.dashboard.csrf import CheckedForm
from hookline.dashboard.listing import field_errors, text
from hookline.dashboard.people import account_name
from hookline.dashboard.sessions import CurrentSession, optional_session
from hookline.dashboard.web import PREFIX, Flash, database, not_found, redirect, render
from hookline.domain import accounts, contacts, events, keys, webhooks
from hookline.schemas.accounts import AccountUpdate

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
    """The account's id (what `hookline users add --account` and support ask for), its name,
    and its call settings (as ``PATCH /v1/account`` changes them)."""
    return await _settings_page(request, session)


async def _settings_page(
    request: Request,
    session: CurrentSession,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
) -> HTMLResponse:
    async with database(request).read() as conn:
        name = await account_name(conn, session.account_id)
        account = await accounts.get_account(conn, session.account_id)
    context = {
        "account_id": session.account_id,
        "account_name": name,
        "values": values or {"max_call_seconds": str(account["max_call_seconds"])},
        "errors": errors or {},
    }
    return render(request, "settings.html", context, status_code=422 if errors else 200)


@router.post("/settings/calls")
async def call_settings(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    values = {"max_call_seconds": text(form, "max_call_seconds")}
    try:
        seconds = values["max_call_seconds"]
        body = AccountUpdate.model_validate(
            {"max_call_seconds": int(seconds) if seconds.isdecimal() else seconds}
        )
    except ValidationError as exc:
        return await _settings_page(request, session, values, field_errors(exc))
    async with database(request).begin() as conn:
        await accounts.update_account(conn, session.account_id, body.provided())
    return redirect(request, f"{PREFIX}/settings", Flash("success", "Call settings saved."))


@router.get("/")
async def trailing_slash(request: Request) -> RedirectResponse:
    return redirect(request, PREFIX, status_code=307)


@router.api_route("/{rest:path}", methods=["GET", "POST"])
async def unknown_page(request: Request, rest: str) -> None:
    await optional_session(request)  # so the 404 page keeps the signed-in navigation
    # Registered last: any other /dashboard path is an HTML 404, not the API's JSON one.
    raise not_found("page")
