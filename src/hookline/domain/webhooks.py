"""Webhook subscriptions: create, list, read, update, delete, rotate the signing secret.

Shared by the API and the dashboard; like every domain module, nothing here commits: the caller
owns the transaction. Secrets are stored encrypted (``crypto.SecretBox``) and shown in full only
by ``create_webhook`` and ``rotate_secret``; everything else returns ``MASKED_SECRET``.

URLs must pass ``check_url`` first: it may resolve DNS (seconds), which must not happen inside a
write transaction (on SQLite that would hold the single write lock). ``CheckedUrl`` makes mypy
enforce the order.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NewType

from hookline import ids
from hookline.crypto import SecretBox
from hookline.delivery.conformance import Target
from hookline.delivery.endpoint_auth import auth_from_plain
from hookline.delivery.manager import cancel_pending_deliveries
from hookline.delivery.payloads import webhook_out
from hookline.delivery.shaping import shape_of
from hookline.delivery.signing import SECRET_PREFIX, live_secrets, new_signing_key
from hookline.delivery.ssrf import UnsafeURL, validate_webhook_url
from hookline.domain import webhook_identity as identity
from hookline.domain import webhook_routing as routing
from hookline.domain.events import EVENT_TYPES
from hookline.errors import ValidationFailed
from hookline.storage.db import Connection, fetch_one
from hookline.storage.queries import accounts as account_queries
from hookline.storage.queries import webhooks as queries
from hookline.timeutil import utcnow

SECRET_BYTES = 32
# After a rotation deliveries are signed with both secrets for this long, so receivers can switch.
PREVIOUS_SECRET_TTL = timedelta(hours=24)
# Fields a PATCH may change; ``url`` comes separately, as a ``CheckedUrl``, and ``headers`` as a
# patch to merge (``update_webhook``'s ``headers``).
UPDATABLE_FIELDS = ("events", "name", "is_active", "filter", "rate_limit", "redact", "payload")
MAX_REDACT_PATHS = 50
MAX_REDACT_PATH = 200
# A path into the event's data: ``data`` and one or more keys, no empty key, no space.
_REDACT_PATH = re.compile(r"data(\.[^.\s]+)+")

CheckedUrl = NewType("CheckedUrl", str)


@dataclass(frozen=True)
class AuthChange:
    """A PATCH's ``auth``: the object to store (masked secrets kept), or None to remove it."""

    value: Mapping[str, Any] | None


def generate_secret() -> str:
    # Standard base64, as the Standard Webhooks libraries decode it.
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def new_secret(signing: str) -> str:
    """A fresh secret of a signing scheme: an HMAC secret or an Ed25519 signing key."""
    return new_signing_key() if signing == identity.ED25519 else generate_secret()


def _secret_columns(box: SecretBox, secret: str) -> dict[str, Any]:
    """The stored current secret, encrypted, and the public key it shows (Ed25519)."""
    return {"secret_enc": box.encrypt(secret), "public_key": identity.public_key_for(secret)}


def _shown_secret(secret: str) -> str | None:
    """What a response may show of a new secret: an HMAC secret in full, never a signing key."""
    return None if identity.signing_of(secret) == identity.ED25519 else secret


def normalize_events(values: Iterable[str], field: str = "events") -> list[str]:
    """A non-empty set of known event types, duplicates dropped, order kept."""
    kept = list(dict.fromkeys(values))
    if not kept:
        raise ValueError(f"{field} must list at least one event type")
    unknown = [value for value in kept if value not in EVENT_TYPES]
    if unknown:
        raise ValueError(
            f"{field} has unknown event type(s) {', '.join(unknown)}; "
            f"known: {', '.join(EVENT_TYPES)}"
        )
    return kept


def normalize_redact(values: Iterable[str]) -> list[str]:
    """Distinct paths under ``data`` (``data.phone_number``), order kept; whether a subscribed
    type has each is ``schemas.catalogue.check_redact_fits``."""
    kept = list(dict.fromkeys(values))
    if len(kept) > MAX_REDACT_PATHS:
        raise ValueError(f"redact may list at most {MAX_REDACT_PATHS} paths")
    for path in kept:
        if len(path) > MAX_REDACT_PATH or not _REDACT_PATH.fullmatch(path):
            raise ValueError(
                f"redact path {path[:MAX_REDACT_PATH]!r} must be a dot path under data, e.g. "
                f"data.phone_number, ..{MAX_REDACT_PATH} chars"
            )
    return kept


async def check_url(url: str, *, allow_private: bool) -> CheckedUrl:
    """``url`` trimmed, or a 422 on ``url`` when it is malformed or reaches a non-public address."""
    candidate = url.strip()
    try:
        await validate_webhook_url(candidate, allow_private)
    except UnsafeURL as exc:
        raise ValidationFailed.for_field("url", str(exc)) from None
    return CheckedUrl(candidate)


def _empty_as_none(value: str | None) -> str | None:
    return value if value else None


async def _count_for_update(conn: Connection, account_id: str) -> int:
    # Locking the account row serialises concurrent creates on PostgreSQL, so the cap holds;
    # SQLite ignores FOR UPDATE but its writes are serialised already.
    # Two statements: the count must be read after the lock is granted, in a snapshot that
    # sees what the previous holder committed (READ COMMITTED takes one per statement).
    await conn.execute(account_queries.LOCK, {"account_id": account_id})
    count = await conn.scalar(queries.COUNT_OF_ACCOUNT, {"account_id": account_id})
    return int(count or 0)


async def create_webhook(
    conn: Connection,
    account_id: str,
    *,
    url: CheckedUrl,
    events: list[str],
    name: str | None = None,
    is_active: bool = True,
    box: SecretBox,
    max_webhooks: int,
    headers: dict[str, str] | None = None,
    filter: str | None = None,
    rate_limit: int | None = None,
    signing: str = identity.HMAC,
    auth: Mapping[str, Any] | None = None,
    redact: list[str] | None = None,
    payload: str = "full",
) -> dict[str, Any]:
    """Create a subscription; the result carries the full HMAC secret (the only time but
    rotation), or an Ed25519 webhook's public key. ``auth`` as the request gave it (checked
    here: PEMs, an https url for mTLS; ``identity.check_token_url`` before)."""
    resolved_auth = identity.resolve_auth(auth, None)
    identity.check_auth_fits_url(resolved_auth, url)
    if await _count_for_update(conn, account_id) >= max_webhooks:
        # A quota, not a field's fault: no field is named.
        raise ValidationFailed(
            [], f"An account may have at most {max_webhooks} webhooks; delete one first."
        )
    secret = new_secret(signing)
    now = utcnow()
    headers_enc, header_names = routing.seal(box, headers or {})
    row = {
        "id": ids.webhook_id(),
        "account_id": account_id,
        "url": url,
        "name": _empty_as_none(name),
        "events": events,
        "is_active": is_active,
        **_secret_columns(box, secret),
        **identity.seal_auth(box, resolved_auth),
        "previous_secret_enc": None,
        "previous_secret_expires_at": None,
        "disabled_reason": None,
        "failing_since": None,
        "consecutive_failures": 0,
        "filter_errors": 0,
        "next_probe_at": None,
        "headers_enc": headers_enc,
        "header_names": header_names,
        "filter": filter,
        "rate_limit": rate_limit,
        "rate_starts": None,
        "conformance_at": None,
        "redact": redact or [],
        "payload": payload,
        "created_at": now,
        "updated_at": now,
    }
    inserted = (await conn.execute(queries.INSERT, row)).one()
    return webhook_out(inserted, _shown_secret(secret))


async def list_webhooks(conn: Connection, account_id: str) -> list[dict[str, Any]]:
    """Every subscription of the account (at most ``max_webhooks_per_account``), oldest first."""
    rows = await conn.execute(queries.OF_ACCOUNT, {"account_id": account_id})
    return [webhook_out(r) for r in rows]


async def _select(conn: Connection, account_id: str, webhook_id: str, *, lock: bool = False) -> Any:
    query = queries.BY_ID_FOR_UPDATE if lock else queries.BY_ID
    return await fetch_one(conn, query, {"id": webhook_id, "account_id": account_id})


async def get_webhook(conn: Connection, account_id: str, webhook_id: str) -> dict[str, Any] | None:
    row = await _select(conn, account_id, webhook_id)
    return webhook_out(row) if row is not None else None


def _header_changes(
    row: Any, patch: dict[str, str | None] | None, box: SecretBox | None
) -> dict[str, Any]:
    """The stored columns after merging a PATCH's ``headers``, or {} when nothing changes."""
    if not patch:
        return {}
    assert box is not None, "a headers patch needs the SecretBox"
    current = routing.unseal_stored(box, row.headers_enc)
    try:
        merged = routing.merge_headers(current, patch)
    except ValueError as exc:
        raise ValidationFailed.for_field("headers", str(exc)) from None
    if merged == current:
        return {}
    headers_enc, header_names = routing.seal(box, merged)
    return {"headers_enc": headers_enc, "header_names": header_names}


def _changed_values(row: Any, changes: dict[str, Any]) -> dict[str, Any]:
    if "redact" in changes and changes["redact"] is None:
        changes = {**changes, "redact": []}
    for field in ("events", "is_active", "payload"):
        if field in changes and changes[field] is None:
            raise ValidationFailed.for_field(field, f"{field} cannot be null")
    wanted = {**changes}
    if "name" in wanted:
        wanted["name"] = _empty_as_none(wanted["name"])
    current = webhook_out(row)
    changed = {field: value for field, value in wanted.items() if current[field] != value}
    if changed.get("is_active") is True:
        # Turning a webhook back on starts it afresh: the auto-disable reason and clock reset.
        changed.update(disabled_reason=None, failing_since=None)
    if changed.get("is_active") is True or "url" in changed:
        # A fresh start or a new target: the delivery circuit closes (delivery.retry).
        changed.update(consecutive_failures=0, next_probe_at=None)
    return changed


async def update_webhook(
    conn: Connection,
    account_id: str,
    webhook_id: str,
    changes: dict[str, Any],
    *,
    url: CheckedUrl | None = None,
    headers: dict[str, str | None] | None = None,
    box: SecretBox | None = None,
    signing: str | None = None,
    auth: AuthChange | None = None,
) -> dict[str, Any] | None:
    """Apply a partial update (``changes`` keys from ``UPDATABLE_FIELDS``; ``name: None``
    clears it; ``headers`` is merged; ``signing`` switches the scheme with the rotation's
    overlap; ``auth`` replaces it, masked secrets kept; ``box`` needed for those three);
    bumps ``updated_at`` only when something changed. None when not found. A switch to HMAC
    returns the new secret in full (the one time it is shown)."""
    unknown = set(changes) - set(UPDATABLE_FIELDS)
    assert not unknown, f"not updatable here: {unknown}"
    row = await _select(conn, account_id, webhook_id, lock=True)
    if row is None:
        return None
    changed = _changed_values(row, {**changes, **({"url": url} if url is not None else {})})
    changed.update(_header_changes(row, headers, box))
    changed.update(_auth_changes(row, auth, box))
    identity.check_auth_fits_url(
        changed["auth_shown"] if "auth_enc" in changed else row.auth_shown, url or row.url
    )
    new = None
    if signing is not None and signing != identity.signing_of_public_key(row.public_key):
        assert box is not None, "a new signing scheme needs the SecretBox"
        new = new_secret(signing)
        changed.update(_rotated(row, box, new))
    if not changed:
        return webhook_out(row)
    now = utcnow()
    changed["updated_at"] = now
    updated = (
        await conn.execute(queries.UPDATE.get(frozenset(changed)), {**changed, "b_id": webhook_id})
    ).one()
    if changed.get("is_active") is False:
        # Inactive webhooks get nothing: what was queued for it is cancelled in this transaction.
        await cancel_pending_deliveries(conn, webhook_id, now=now)
    return webhook_out(updated, _shown_secret(new) if new is not None else None)


def _auth_changes(row: Any, change: AuthChange | None, box: SecretBox | None) -> dict[str, Any]:
    """The stored columns of a PATCH's ``auth``, or {} when nothing changes."""
    if change is None:
        return {}
    assert box is not None, "an auth change needs the SecretBox"
    stored = identity.unseal_auth(box, row.auth_enc)
    resolved = identity.resolve_auth(change.value, stored)
    if resolved == stored:
        return {}
    return identity.seal_auth(box, resolved)


def _rotated(row: Any, box: SecretBox, secret: str) -> dict[str, Any]:
    """The columns of a new current secret: the one it replaces signs beside it for
    ``PREVIOUS_SECRET_TTL``, so receivers switch without dropping a delivery."""
    return {
        **_secret_columns(box, secret),
        "previous_secret_enc": row.secret_enc,
        "previous_secret_expires_at": utcnow() + PREVIOUS_SECRET_TTL,
    }


def probe_target(row: Any, *, box: SecretBox, api_url: str) -> Target:
    """What the receiver check needs of webhook ``row``: the URL, the live secrets, the
    custom headers and the auth it sends, in plaintext (never returned to a client), and the
    shape of its bodies (``api_url``: the server's public URL, for thin bodies)."""
    previous = box.decrypt(row.previous_secret_enc) if row.previous_secret_enc else None
    secrets_now = live_secrets(
        box.decrypt(row.secret_enc), previous, row.previous_secret_expires_at, utcnow()
    )
    auth = auth_from_plain(box.decrypt(row.auth_enc)) if row.auth_enc else None
    headers = routing.unseal(box, row.headers_enc)
    shape = shape_of(row.redact, row.payload, api_url)
    return Target(row.id, row.url, secrets_now, headers, auth, shape)


async def delete_webhook(conn: Connection, account_id: str, webhook_id: str) -> bool:
    """Hard delete; its deliveries go with it (ON DELETE CASCADE), so none is attempted again."""
    result = await conn.execute(queries.DELETE, {"id": webhook_id, "account_id": account_id})
    return bool(result.rowcount)


async def rotate_secret(
    conn: Connection, account_id: str, webhook_id: str, *, box: SecretBox
) -> dict[str, str | None] | None:
    """A new secret of the webhook's scheme: ``{"secret", "public_key"}``, an HMAC secret in
    full or an Ed25519 public key (its signing key never leaves the server); the old one
    keeps signing for ``PREVIOUS_SECRET_TTL``. None when not found."""
    row = await _select(conn, account_id, webhook_id, lock=True)
    if row is None:
        return None
    secret = new_secret(identity.signing_of_public_key(row.public_key))
    rotated = {**_rotated(row, box, secret), "updated_at": utcnow()}
    await conn.execute(queries.UPDATE.get(frozenset(rotated)), {**rotated, "b_id": webhook_id})
    return {"secret": _shown_secret(secret), "public_key": identity.public_key_for(secret)}
