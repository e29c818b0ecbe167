"""The webhook and delivery objects as the API shows them, and as the events about them carry
them.

Here, below the domain, because both write them: the API (``domain.webhooks``,
``domain.deliveries``) and the worker when it disables a webhook
(``delivery.manager.disable_webhook``, the ``webhook.disabled`` event) or gives up on a
delivery (``delivery.exhausted``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hookline.delivery.signing import SECRET_PREFIX
from hookline.timeutil import iso

MASKED_VALUE = "********"
MASKED_SECRET = SECRET_PREFIX + MASKED_VALUE


def masked_headers(names: Iterable[str] | None) -> dict[str, str]:
    """A webhook's custom headers as shown: their names, every value masked."""
    return {name: MASKED_VALUE for name in names or ()}


def webhook_out(row: Any, secret: str | None = None) -> dict[str, Any]:
    """The webhook object; ``secret`` is the HMAC secret's plaintext to show, or masked when
    None. An Ed25519 webhook has no secret to show (``null``), only its ``public_key``; its
    ``auth`` is shown with every secret masked (``auth_shown``, never decrypted here)."""
    ed25519 = row.public_key is not None
    return {
        "id": row.id,
        "url": row.url,
        "name": row.name,
        "events": list(row.events),
        "is_active": bool(row.is_active),
        "secret": None if ed25519 else secret if secret is not None else MASKED_SECRET,
        "signing": "ed25519" if ed25519 else "hmac",
        "public_key": row.public_key,
        "auth": dict(row.auth_shown) if row.auth_shown is not None else None,
        "disabled_reason": row.disabled_reason,
        "headers": masked_headers(row.header_names),
        "filter": row.filter,
        "rate_limit": row.rate_limit,
        "redact": list(row.redact or ()),
        "payload": row.payload,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }


def delivery_out(row: Any) -> dict[str, Any]:
    """The delivery object (without its attempt log)."""
    return {
        "id": row.id,
        "webhook_id": row.webhook_id,
        "event_id": row.event_id,
        "event_type": row.event_type,
        "status": row.status,
        "attempts": row.attempts,
        "last_status_code": row.last_status_code,
        "last_error": row.last_error,
        "next_attempt_at": iso(row.next_attempt_at),
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }
