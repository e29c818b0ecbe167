"""Webhooks: list, create (secret shown once), edit, enable/disable, rotate the secret, send a
test event, delete; and each webhook's delivery log with every attempt and a retry button.

Everything goes through ``domain.webhooks`` and ``domain.deliveries``, as the API does.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from hookline.crypto import SecretBox
from hookline.dashboard.csrf import CheckedForm
from hookline.dashboard.listing import (
    PAGE_SIZE,
    cursor_id,
    field_errors,
    next_page_url,
    text,
    whole_number,
)
from hookline.dashboard.pages_operations import webhook_health
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
from hookline.domain import deliveries as deliveries_domain
from hookline.domain import webhook_identity as identity
from hookline.domain import webhook_routing as routing
from hookline.domain import webhooks as domain
from hookline.domain.conformance import run_check
from hookline.domain.events import EVENT_TYPES
from hookline.errors import RateLimited, ValidationFailed
from hookline.schemas import catalogue
from hookline.schemas.webhooks import WebhookCreate, WebhookUpdate
from hookline.settings import Settings
from hookline.timeutil import utcnow

router = APIRouter(prefix=f"{PREFIX}/webhooks")
DELIVERY_STATUSES = ("pending", "succeeded", "failed", "cancelled")


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


def _url(webhook_id: str, suffix: str = "") -> str:
    return f"{PREFIX}/webhooks/{webhook_id}{suffix}"


async def _webhook(request: Request, session: CurrentSession, webhook_id: str) -> dict[str, Any]:
    async with database(request).read() as conn:
        webhook = await domain.get_webhook(conn, session.account_id, webhook_id)
    if webhook is None:
        raise not_found("webhook")
    return webhook


HEADER_ROWS = 3
AUTH_TYPES = (
    ("", "None"),
    ("oauth2_client_credentials", "OAuth2 client credentials"),
    ("mtls", "Client certificate (mTLS)"),
)
AUTH_FIELDS = {
    "oauth2_client_credentials": ("token_url", "client_id", "client_secret", "scope"),
    "mtls": ("certificate", "private_key", "ca"),
}


def _form_values(form: Any) -> dict[str, Any]:
    return {
        "url": text(form, "url"),
        "name": text(form, "name"),
        "events": [str(e) for e in form.getlist("events")],
        "filter": text(form, "filter"),
        "rate_limit": text(form, "rate_limit"),
        "redact": str(form.get("redact") or ""),
        "payload": text(form, "payload") or "full",
        "header_rows": [
            (text(form, f"header_name_{i}"), str(form.get(f"header_value_{i}") or ""))
            for i in range(HEADER_ROWS)
        ],
        "remove_headers": [str(name) for name in form.getlist("remove_header")],
        "signing": text(form, "signing") or "hmac",
        "auth_type": text(form, "auth_type"),
        **{
            f"auth_{name}": str(form.get(f"auth_{name}") or "").strip()
            for fields in AUTH_FIELDS.values()
            for name in fields
        },
    }


def _identity_fields(values: dict[str, Any]) -> dict[str, Any]:
    """The form's signing and auth as the API takes them: the fields of the chosen auth type
    (blank optional ones as null), or null for none."""
    kind = values["auth_type"]
    auth = None
    if kind in AUTH_FIELDS:
        auth = {"type": kind}
        auth.update({name: values[f"auth_{name}"] or None for name in AUTH_FIELDS[kind]})
    elif kind:
        auth = {"type": kind}  # refused by the schema, naming auth
    return {"signing": values["signing"], "auth": auth}


def _auth_values(webhook: dict[str, Any]) -> dict[str, Any]:
    """An edit form's signing and auth fields from the webhook as shown (secrets masked)."""
    auth = webhook["auth"] or {}
    values = {"signing": webhook["signing"], "auth_type": auth.get("type", "")}
    for fields in AUTH_FIELDS.values():
        values.update({f"auth_{name}": auth.get(name) or "" for name in fields})
    return values


def _routing_fields(values: dict[str, Any]) -> dict[str, Any]:
    """The form's filter, rate limit, redact paths (one a line) and payload as the API takes
    them (blank: none)."""
    rate = whole_number(values["rate_limit"])
    return {
        "filter": values["filter"] or None,
        "rate_limit": None if rate == "" else rate,
        "redact": [line.strip() for line in values["redact"].splitlines() if line.strip()],
        "payload": values["payload"],
    }


def _header_rows(values: dict[str, Any]) -> dict[str, str]:
    """Headers typed into the form's rows (a row without a name is ignored)."""
    return {name: value for name, value in values["header_rows"] if name}


def _form_errors(exc: ValidationError | ValidationFailed) -> dict[str, str]:
    # "headers.X-Key" (a value of the wrong type) is shown at the headers field, "auth.ca" at
    # the auth fieldset (its message names the field).
    return {
        ("headers" if name.startswith("headers.") else name): message
        for name, message in field_errors(exc).items()
    }


def _form_page(
    request: Request,
    webhook: dict[str, Any] | None,
    values: dict[str, Any],
    errors: dict[str, str],
    status_code: int = 200,
) -> HTMLResponse:
    context = {
        "webhook": webhook,
        "values": values,
        "errors": errors,
        "event_types": EVENT_TYPES,
        "auth_types": AUTH_TYPES,
        "header_rows": values.get("header_rows") or [("", "")] * HEADER_ROWS,
        "unsent_headers": routing.unsent_names(webhook["headers"] if webhook else ()),
    }
    return render(request, "webhook_form.html", context, status_code=status_code)


@router.get("")
async def list_webhooks(request: Request, session: CurrentSession) -> HTMLResponse:
    async with database(request).read() as conn:
        webhooks = await domain.list_webhooks(conn, session.account_id)
        for webhook in webhooks:
            latest, _ = await deliveries_domain.list_deliveries(
                conn, session.account_id, webhook["id"], limit=1
            )
            webhook["last_delivery"] = latest[0] if latest else None
    return render(request, "webhooks.html", {"webhooks": webhooks})


@router.get("/new")
async def new_webhook(request: Request, session: CurrentSession) -> HTMLResponse:
    return _form_page(request, None, {"url": "", "name": "", "events": list(EVENT_TYPES)}, {})


@router.post("")
async def create_webhook(request: Request, session: CurrentSession, form: CheckedForm) -> Response:
    values = _form_values(form)
    settings = _settings(request)
    try:
        body = WebhookCreate.model_validate(
            {
                "url": values["url"],
                "events": values["events"],
                "name": values["name"] or None,
                "headers": _header_rows(values),
                **_routing_fields(values),
                **_identity_fields(values),
            }
        )
        url = await domain.check_url(body.url, allow_private=settings.allow_private_targets)
        auth = body.auth.model_dump() if body.auth is not None else None
        await identity.check_token_url(auth, allow_private=settings.allow_private_targets)
        async with database(request).begin() as conn:
            webhook = await domain.create_webhook(
                conn,
                session.account_id,
                url=url,
                events=body.events,
                name=body.name,
                box=_box(request),
                max_webhooks=settings.max_webhooks_per_account,
                headers=body.headers,
                filter=body.filter,
                rate_limit=body.rate_limit,
                signing=body.signing,
                auth=auth,
                redact=body.redact,
                payload=body.payload,
            )
            catalogue.check_redact_fits(webhook)
    except (ValidationError, ValidationFailed) as exc:
        return _form_page(request, None, values, _form_errors(exc), status_code=422)
    return redirect(request, _url(webhook["id"]), _created_flash(webhook))


def _created_flash(webhook: dict[str, Any]) -> Flash:
    if webhook["public_key"] is not None:
        return Flash(
            "success",
            "Webhook created. Give your receiver its public key to verify deliveries "
            "(it is also shown on this page).",
            secret=webhook["public_key"],
            reveal_label="Public key",
        )
    return Flash(
        "success",
        "Webhook created. Copy its signing secret now to verify deliveries: "
        "it won't be shown again.",
        secret=webhook["secret"],
        reveal_label="Signing secret",
    )


@router.get("/{webhook_id}")
async def show_webhook(
    request: Request,
    session: CurrentSession,
    webhook_id: str,
    status: str = "",
    cursor: str | None = None,
) -> HTMLResponse:
    webhook = await _webhook(request, session, webhook_id)
    async with database(request).read() as conn:
        deliveries, next_id = await deliveries_domain.list_deliveries(
            conn,
            session.account_id,
            webhook_id,
            limit=PAGE_SIZE,
            cursor=cursor_id(cursor),
            status=status if status in DELIVERY_STATUSES else None,
        )
        health = await webhook_health(conn, webhook_id, _settings(request))
    context = {
        **health,
        "webhook": webhook,
        "deliveries": deliveries,
        "next_url": next_page_url(request, next_id) if next_id else None,
        "first_page": cursor is None,
        "status": status,
        "statuses": DELIVERY_STATUSES,
        "unsent_headers": routing.unsent_names(webhook["headers"]),
    }
    return render(request, "webhook_detail.html", context)


@router.get("/{webhook_id}/edit")
async def edit_webhook(request: Request, session: CurrentSession, webhook_id: str) -> HTMLResponse:
    webhook = await _webhook(request, session, webhook_id)
    values = {
        "url": webhook["url"],
        "name": webhook["name"] or "",
        "events": webhook["events"],
        "filter": webhook["filter"] or "",
        "rate_limit": str(webhook["rate_limit"] or ""),
        "redact": "\n".join(webhook["redact"]),
        "payload": webhook["payload"],
        **_auth_values(webhook),
    }
    return _form_page(request, webhook, values, {})


@router.post("/{webhook_id}/edit")
async def update_webhook(
    request: Request, session: CurrentSession, form: CheckedForm, webhook_id: str
) -> Response:
    webhook = await _webhook(request, session, webhook_id)
    values = _form_values(form)
    try:
        removed: dict[str, str | None] = {name: None for name in values["remove_headers"]}
        body = WebhookUpdate.model_validate(
            {
                "url": values["url"],
                "events": values["events"],
                "name": values["name"] or None,
                "headers": {**removed, **_header_rows(values)},
                **_routing_fields(values),
                **_identity_fields(values),
            }
        )
        allow_private = _settings(request).allow_private_targets
        url = await domain.check_url(body.url or "", allow_private=allow_private)
        auth = domain.AuthChange(body.auth.model_dump() if body.auth is not None else None)
        await identity.check_token_url(auth.value, allow_private=allow_private)
        changes = {
            "events": body.events,
            "name": body.name,
            "filter": body.filter,
            "rate_limit": body.rate_limit,
            "redact": body.redact,
            "payload": body.payload,
        }
        async with database(request).begin() as conn:
            updated = await domain.update_webhook(
                conn,
                session.account_id,
                webhook_id,
                changes,
                url=url,
                headers=body.headers,
                box=_box(request),
                signing=body.signing,
                auth=auth,
            )
            if updated is not None:
                catalogue.check_redact_fits(updated)
    except (ValidationError, ValidationFailed) as exc:
        return _form_page(request, webhook, values, _form_errors(exc), status_code=422)
    if updated is None:
        raise not_found("webhook")
    return redirect(request, _url(webhook_id), _saved_flash(webhook, updated))


def _saved_flash(before: dict[str, Any], after: dict[str, Any]) -> Flash:
    """A switch of signing scheme shows what the receiver needs now (an HMAC secret only
    this once)."""
    if after["signing"] == before["signing"]:
        return Flash("success", "Webhook saved.")
    overlap = "The old one keeps signing beside it for 24 hours."
    if after["public_key"] is not None:
        return Flash(
            "success",
            f"Webhook saved, now signing with Ed25519. {overlap}",
            secret=after["public_key"],
            reveal_label="Public key",
        )
    return Flash(
        "success",
        f"Webhook saved, now signing with HMAC. Copy the secret now: it won't be shown again. "
        f"{overlap}",
        secret=after["secret"],
        reveal_label="Signing secret",
    )


async def _set_active(
    request: Request, session: CurrentSession, webhook_id: str, active: bool
) -> RedirectResponse:
    async with database(request).begin() as conn:
        updated = await domain.update_webhook(
            conn, session.account_id, webhook_id, {"is_active": active}
        )
    if updated is None:
        raise not_found("webhook")
    message = (
        "Webhook enabled: new events will be delivered to it."
        if active
        else "Webhook disabled: it receives nothing until you enable it again."
    )
    return redirect(request, _url(webhook_id), Flash("success", message))


@router.post("/{webhook_id}/enable")
async def enable_webhook(
    request: Request, session: CurrentSession, _form: CheckedForm, webhook_id: str
) -> RedirectResponse:
    return await _set_active(request, session, webhook_id, True)


@router.post("/{webhook_id}/disable")
async def disable_webhook(
    request: Request, session: CurrentSession, _form: CheckedForm, webhook_id: str
) -> RedirectResponse:
    return await _set_active(request, session, webhook_id, False)


@router.get("/{webhook_id}/rotate-secret")
async def confirm_rotate(
    request: Request, session: CurrentSession, webhook_id: str
) -> HTMLResponse:
    webhook = await _webhook(request, session, webhook_id)
    return confirm_page(
        request,
        title="Rotate the signing secret?",
        message=(
            f"A new secret is made for {webhook['url']}. For 24 hours each delivery is "
            "signed with both the old and the new secret, so you can update your receiver "
            "without missing any."
        ),
        action=_url(webhook_id, "/rotate-secret"),
        button="Rotate secret",
        cancel=_url(webhook_id),
    )


@router.post("/{webhook_id}/rotate-secret")
async def rotate_secret(
    request: Request, session: CurrentSession, _form: CheckedForm, webhook_id: str
) -> RedirectResponse:
    async with database(request).begin() as conn:
        rotated = await domain.rotate_secret(
            conn, session.account_id, webhook_id, box=_box(request)
        )
    if rotated is None:
        raise not_found("webhook")
    if rotated["public_key"] is not None:
        flash = Flash(
            "success",
            "Signing key rotated. Deliveries carry signatures by both keys for 24 hours; "
            "give your receiver the new public key.",
            secret=rotated["public_key"],
            reveal_label="New public key",
        )
    else:
        flash = Flash(
            "success",
            "Secret rotated. The old one keeps working for 24 hours; copy the new one now.",
            secret=rotated["secret"],
            reveal_label="New signing secret",
        )
    return redirect(request, _url(webhook_id), flash)


@router.post("/{webhook_id}/test")
async def send_test(
    request: Request, session: CurrentSession, _form: CheckedForm, webhook_id: str
) -> RedirectResponse:
    webhook = await _webhook(request, session, webhook_id)
    if not webhook["is_active"]:
        flash = Flash("error", "This webhook is disabled: enable it first, then send a test event.")
        return redirect(request, _url(webhook_id), flash)
    try:
        async with database(request).begin() as conn:
            event_id = await deliveries_domain.insert_test_event(
                conn, session.account_id, webhook_id
            )
    except RateLimited as exc:
        return redirect(request, _url(webhook_id), _not_now(exc))
    flash = Flash(
        "success",
        f"Test event {event_id} sent. Its delivery appears below in a moment (reload the page).",
    )
    return redirect(request, _url(webhook_id), flash)


@router.post("/{webhook_id}/conformance")
async def check_receiver(
    request: Request, session: CurrentSession, _form: CheckedForm, webhook_id: str
) -> Response:
    webhook = await _webhook(request, session, webhook_id)
    try:
        report = await run_check(
            _settings(request), database(request), _box(request), session.account_id, webhook_id
        )
    except RateLimited as exc:
        return redirect(request, _url(webhook_id), _not_now(exc))
    return render(request, "conformance.html", {"webhook": webhook, "report": report})


def _not_now(refused: RateLimited) -> Flash:
    """The API's 429, for people: why, and when to try again."""
    seconds = refused.headers.get("Retry-After", "1")
    return Flash("error", f"Not sent: {refused.message} Try again in {seconds} s.")


@router.get("/{webhook_id}/delete")
async def confirm_delete(
    request: Request, session: CurrentSession, webhook_id: str
) -> HTMLResponse:
    webhook = await _webhook(request, session, webhook_id)
    return confirm_page(
        request,
        title="Delete this webhook?",
        message=(
            f"{webhook['url']} stops receiving events at once, pending retries included, "
            "and its delivery log is deleted. This cannot be undone."
        ),
        action=_url(webhook_id, "/delete"),
        button="Delete webhook",
        cancel=_url(webhook_id),
    )


@router.post("/{webhook_id}/delete")
async def delete_webhook(
    request: Request, session: CurrentSession, _form: CheckedForm, webhook_id: str
) -> RedirectResponse:
    async with database(request).begin() as conn:
        deleted = await domain.delete_webhook(conn, session.account_id, webhook_id)
    if not deleted:
        raise not_found("webhook")
    return redirect(request, f"{PREFIX}/webhooks", Flash("success", "Webhook deleted."))


@router.get("/{webhook_id}/deliveries/{delivery_id}")
async def show_delivery(
    request: Request, session: CurrentSession, webhook_id: str, delivery_id: str
) -> HTMLResponse:
    webhook = await _webhook(request, session, webhook_id)
    async with database(request).read() as conn:
        delivery = await deliveries_domain.get_delivery(
            conn, session.account_id, webhook_id, delivery_id
        )
    if delivery is None:
        raise not_found("delivery")
    return render(request, "delivery.html", {"webhook": webhook, "delivery": delivery})


@router.post("/{webhook_id}/deliveries/{delivery_id}/retry")
async def retry_delivery(
    request: Request,
    session: CurrentSession,
    _form: CheckedForm,
    webhook_id: str,
    delivery_id: str,
) -> RedirectResponse:
    async with database(request).begin() as conn:
        delivery = await deliveries_domain.retry_delivery(
            conn, session.account_id, webhook_id, delivery_id, now=utcnow()
        )
    if delivery is None:
        raise not_found("delivery")
    flash = Flash("success", "Retry queued: the new attempt appears below in a moment.")
    return redirect(request, _url(webhook_id, f"/deliveries/{delivery_id}"), flash)
