"""The overview: where a new user sees what to do next, step by step."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from hookline.dashboard.csrf import CheckedForm
from hookline.dashboard.listing import field_errors, text, whole_number
from hookline.dashboard.people import account_name
from hookline.dashboard.sessions import CurrentSession, optional_session
from hookline.dashboard.web import PREFIX, Flash, database, not_found, redirect, render
from hookline.domain import accounts, call_schemas, contacts, events, keys, webhooks
from hookline.errors import ApiError, ValidationFailed
from hookline.schemas.accounts import AccountUpdate
from hookline.schemas.calls import AnalysisSchemaIn
from hookline.schemas.failures import validation_failure

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
    its call settings (as ``PATCH /v1/account`` changes them) and its call analysis schema
    (as ``PUT /v1/call-analysis-schema`` sets it)."""
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
        schema = await call_schemas.current_schema(conn, session.account_id)
    shown = {
        "max_call_seconds": str(account["max_call_seconds"]),
        "analysis_schema": _pretty(schema["schema"]),
    }
    context = {
        "account_id": session.account_id,
        "account_name": name,
        "values": {**shown, **(values or {})},
        "errors": errors or {},
        "schema": schema,
    }
    return render(request, "settings.html", context, status_code=422 if errors else 200)


@router.post("/settings/calls")
async def call_settings(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    values = {"max_call_seconds": text(form, "max_call_seconds")}
    try:
        body = AccountUpdate.model_validate(
            {"max_call_seconds": whole_number(values["max_call_seconds"])}
        )
    except ValidationError as exc:
        return await _settings_page(request, session, values, field_errors(exc))
    async with database(request).begin() as conn:
        await accounts.update_account(conn, session.account_id, body.provided())
    return redirect(request, f"{PREFIX}/settings", Flash("success", "Call settings saved."))


@router.post("/settings/analysis-schema")
async def analysis_schema_settings(
    request: Request, session: CurrentSession, form: CheckedForm
) -> Response:
    """Stores the form's schema as the account's next version, checked as the API checks it."""
    source = text(form, "analysis_schema")
    try:
        schema = _parsed_schema(source)
        async with database(request).begin() as conn:
            stored = await call_schemas.put_schema(conn, session.account_id, schema)
    except (ValidationError, ApiError) as exc:
        errors = {"analysis_schema": _schema_refusal(exc)}
        return await _settings_page(request, session, {"analysis_schema": source}, errors)
    saved = Flash("success", f"Call analysis schema saved as version {stored['version']}.")
    return redirect(request, f"{PREFIX}/settings", saved)


def _pretty(schema: dict[str, object] | None) -> str:
    return "" if schema is None else orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode()


def _parsed_schema(source: str) -> dict[str, object]:
    if not source:
        raise ValidationFailed.for_field("schema", "enter a JSON Schema")
    try:
        value = orjson.loads(source)
    except orjson.JSONDecodeError as error:
        raise ValidationFailed.for_field("schema", f"not valid JSON: {error}") from None
    return AnalysisSchemaIn.model_validate(value).root


def _schema_refusal(error: ValidationError | ApiError) -> str:
    """The API's refusal in one line: each field's path into the schema and its message."""
    failure = validation_failure(error.errors()) if isinstance(error, ValidationError) else error
    fields = (failure.details or {}).get("fields") or []
    named = [
        f"{item['message']}"
        if item["field"] in ("schema", "body")
        else f"{item['field']}: {item['message']}"
        for item in fields
    ]
    return "; ".join(named) or failure.message


@router.get("/")
async def trailing_slash(request: Request) -> RedirectResponse:
    return redirect(request, PREFIX, status_code=307)


@router.api_route("/{rest:path}", methods=["GET", "POST"])
async def unknown_page(request: Request, rest: str) -> None:
    await optional_session(request)  # so the 404 page keeps the signed-in navigation
    # Registered last: any other /dashboard path is an HTML 404, not the API's JSON one.
    raise not_found("page")
