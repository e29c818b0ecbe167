"""API keys: create (the full key is shown once), list, revoke with confirmation."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from hookline.dashboard.csrf import CheckedForm
from hookline.dashboard.sessions import CurrentSession
from hookline.dashboard.web import (
    PREFIX,
    Flash,
    confirm_page,
    database,
    not_found,
    redirect,
    render,
)
from hookline.domain import keys

router = APIRouter(prefix=f"{PREFIX}/keys")
MAX_NAME_LENGTH = 200


async def _keys_page(
    request: Request,
    session: CurrentSession,
    *,
    errors: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    async with database(request).read() as conn:
        records = await keys.list_keys(conn, session.account_id)
    live = [k for k in records if k["revoked_at"] is None]
    revoked = [k for k in records if k["revoked_at"] is not None]
    context = {
        "live_keys": list(reversed(live)),
        "revoked_keys": list(reversed(revoked)),
        "scopes": keys.SCOPES,
        "errors": errors or {},
        "values": values or {"name": "", "scopes": list(keys.SCOPES)},
    }
    return render(request, "keys.html", context, status_code=status_code)


@router.get("")
async def list_keys(request: Request, session: CurrentSession) -> HTMLResponse:
    return await _keys_page(request, session)


@router.post("")
async def create_key(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    name = str(form.get("name", "")).strip()
    chosen = [str(s) for s in form.getlist("scopes")]
    errors: dict[str, str] = {}
    if not name:
        errors["name"] = 'Give the key a name, e.g. where it will be used ("billing server").'
    elif len(name) > MAX_NAME_LENGTH:
        errors["name"] = f"Use at most {MAX_NAME_LENGTH} characters."
    if not chosen:
        errors["scopes"] = "Choose at least one scope."
    elif set(chosen) - set(keys.SCOPES):
        errors["scopes"] = "Choose only scopes from the list."
    if errors:
        values = {"name": name, "scopes": chosen}
        return await _keys_page(request, session, errors=errors, values=values, status_code=422)
    async with database(request).begin() as conn:
        full_key, record = await keys.create_key(conn, session.account_id, name, chosen)
    flash = Flash(
        "success",
        f"API key “{record['name']}” created. Copy it now: it won't be shown again.",
        secret=full_key,
        reveal_label="Your new API key",
    )
    return redirect(request, f"{PREFIX}/keys", flash)


async def _live_key(request: Request, session: CurrentSession, key_id: str) -> dict[str, Any]:
    async with database(request).read() as conn:
        records = await keys.list_keys(conn, session.account_id)
    for record in records:
        if record["id"] == key_id and record["revoked_at"] is None:
            return record
    raise not_found("live API key")


@router.get("/{key_id}/revoke")
async def confirm_revoke(request: Request, session: CurrentSession, key_id: str) -> HTMLResponse:
    record = await _live_key(request, session, key_id)
    return confirm_page(
        request,
        title=f"Revoke the API key “{record['name']}”?",
        message=(
            f"Requests made with {record['prefix']}… are refused from the moment you "
            "confirm. This cannot be undone: make sure nothing still uses this key."
        ),
        action=f"{PREFIX}/keys/{key_id}/revoke",
        button="Revoke key",
        cancel=f"{PREFIX}/keys",
    )


@router.post("/{key_id}/revoke")
async def revoke_key(
    request: Request, session: CurrentSession, _form: CheckedForm, key_id: str
) -> RedirectResponse:
    async with database(request).begin() as conn:
        revoked = await keys.revoke_key(conn, session.account_id, key_id)
    if not revoked:
        raise not_found("live API key")
    return redirect(request, f"{PREFIX}/keys", Flash("success", "The API key was revoked."))
