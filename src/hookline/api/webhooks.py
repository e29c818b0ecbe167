"""``/v1/webhooks``: subscriptions (create, list, read, update, delete, rotate the secret).

The delivery endpoints under ``/v1/webhooks/{id}/...`` live in ``api.deliveries``.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from hookline.api.deps import DB, AppSettings, JsonContent, WebhooksRead, WebhooksWrite
from hookline.api.openapi import error_responses
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.crypto import SecretBox
from hookline.domain import webhook_identity as identity
from hookline.domain import webhooks as domain
from hookline.errors import NotFound, ValidationFailed
from hookline.schemas import catalogue
from hookline.schemas.common import SuccessOut
from hookline.schemas.webhooks import WebhookCreate, WebhookOut, WebhookSecretOut, WebhookUpdate

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"], route_class=DirectRoute)


def _not_found(webhook_id: str) -> NotFound:
    return NotFound(f"No webhook with id {webhook_id}.")


def _secret_box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


@router.post(
    "",
    status_code=201,
    response_model=WebhookOut,
    responses=error_responses(400, 401, 403, 413, 415, 422),
    summary="Create a webhook subscription",
    description="The response carries the full signing `secret`: store it now, it is shown in "
    "full only here and on rotation. With `signing: ed25519` it carries the `public_key` "
    "instead (and `secret` is null). `url` must reach a public address (422 otherwise); so "
    "must an OAuth2 `auth.token_url`, over https. An account may have at most 100 webhooks "
    "(`HOOKLINE_MAX_WEBHOOKS_PER_ACCOUNT`). Each `redact` path must be a field of a subscribed "
    "type's body (422 naming `redact`).",
)
async def create_webhook(
    request: Request,
    auth: WebhooksWrite,
    _json: JsonContent,
    body: WebhookCreate,
    db: DB,
    settings: AppSettings,
) -> JSONResponse:
    url = await domain.check_url(body.url, allow_private=settings.allow_private_targets)
    endpoint_auth = body.auth.model_dump() if body.auth is not None else None
    await identity.check_token_url(endpoint_auth, allow_private=settings.allow_private_targets)
    async with db.begin() as conn:
        webhook = await domain.create_webhook(
            conn,
            auth.account_id,
            url=url,
            events=body.events,
            name=body.name,
            is_active=body.is_active,
            box=_secret_box(request),
            max_webhooks=settings.max_webhooks_per_account,
            headers=body.headers,
            filter=body.filter,
            rate_limit=body.rate_limit,
            signing=body.signing,
            auth=endpoint_auth,
            redact=body.redact,
            payload=body.payload,
        )
        catalogue.check_redact_fits(webhook)
    return JSONResponse(
        webhook, status_code=201, headers={"Location": f"/v1/webhooks/{webhook['id']}"}
    )


@router.get(
    "",
    response_model=list[WebhookOut],
    responses=error_responses(401, 403),
    summary="List every webhook subscription of the account (secrets masked)",
    description="Not paginated: an account has at most 100 webhooks.",
)
async def list_webhooks(auth: WebhooksRead, db: DB) -> JSONResponse:
    async with db.read() as conn:
        return JSONResponse(await domain.list_webhooks(conn, auth.account_id))


@router.get(
    "/{webhook_id}",
    response_model=WebhookOut,
    responses=error_responses(401, 403, 404),
    summary="Get a webhook subscription (secret masked)",
)
async def get_webhook(webhook_id: str, auth: WebhooksRead, db: DB) -> JSONResponse:
    async with db.read() as conn:
        webhook = await domain.get_webhook(conn, auth.account_id, webhook_id)
    if webhook is None:
        raise _not_found(webhook_id)
    return JSONResponse(webhook)


@router.patch(
    "/{webhook_id}",
    response_model=WebhookOut,
    responses=error_responses(400, 401, 403, 404, 413, 415, 422),
    summary="Update a webhook subscription (secret masked)",
    description="Absent fields are kept; `name`, `filter` and `rate_limit` take null to "
    'clear. `headers` merges: `{"X-Key": null}` removes that header, names match '
    "case-insensitively. Setting `is_active` to true also clears `disabled_reason`. A new "
    "`signing` starts a new key or secret (the old one signs beside it for 24 hours; a "
    "switch to hmac returns the new `secret` in full, this once). `auth` replaces the "
    'current one; with the same type, a secret sent as "********" keeps the stored one. '
    "`redact` is checked against the subscribed types after the change (new `events` too).",
)
async def update_webhook(
    request: Request,
    webhook_id: str,
    auth: WebhooksWrite,
    _json: JsonContent,
    body: WebhookUpdate,
    db: DB,
    settings: AppSettings,
) -> JSONResponse:
    changes = body.provided()
    new_url = changes.pop("url", None)
    if "url" in body.model_fields_set and new_url is None:
        raise ValidationFailed.for_field("url", "url cannot be null")
    header_patch = changes.pop("headers", None)
    if "headers" in body.model_fields_set and header_patch is None:
        raise ValidationFailed.for_field("headers", "headers cannot be null; use {} or null values")
    signing = changes.pop("signing", None)
    if "signing" in body.model_fields_set and signing is None:
        raise ValidationFailed.for_field("signing", "signing cannot be null")
    auth_change = None
    if "auth" in changes:
        changes.pop("auth")
        auth_change = domain.AuthChange(body.auth.model_dump() if body.auth is not None else None)
        await identity.check_token_url(
            auth_change.value, allow_private=settings.allow_private_targets
        )
    url = (
        await domain.check_url(new_url, allow_private=settings.allow_private_targets)
        if new_url is not None
        else None
    )
    async with db.begin() as conn:
        webhook = await domain.update_webhook(
            conn,
            auth.account_id,
            webhook_id,
            changes,
            url=url,
            headers=header_patch,
            box=_secret_box(request),
            signing=signing,
            auth=auth_change,
        )
        if webhook is not None:
            catalogue.check_redact_fits(webhook)
    if webhook is None:
        raise _not_found(webhook_id)
    return JSONResponse(webhook)


@router.delete(
    "/{webhook_id}",
    response_model=SuccessOut,
    responses=error_responses(401, 403, 404),
    summary="Delete a webhook subscription (no delivery to it starts afterwards)",
)
async def delete_webhook(webhook_id: str, auth: WebhooksWrite, db: DB) -> JSONResponse:
    async with db.begin() as conn:
        deleted = await domain.delete_webhook(conn, auth.account_id, webhook_id)
    if not deleted:
        raise _not_found(webhook_id)
    return JSONResponse({"success": True, "message": f"Webhook {webhook_id} deleted"})


@router.post(
    "/{webhook_id}/rotate-secret",
    response_model=WebhookSecretOut,
    responses=error_responses(401, 403, 404),
    summary="Rotate the signing secret",
    description="Returns the new secret in full (an Ed25519 webhook: its new `public_key`, "
    "and `secret` null). For 24 hours deliveries are signed with both the old and the new "
    "secret or key, so receivers can switch without dropping any.",
)
async def rotate_secret(
    request: Request, webhook_id: str, auth: WebhooksWrite, db: DB
) -> JSONResponse:
    async with db.begin() as conn:
        rotated = await domain.rotate_secret(
            conn, auth.account_id, webhook_id, box=_secret_box(request)
        )
    if rotated is None:
        raise _not_found(webhook_id)
    return JSONResponse(rotated)
