"""The webhook object as the API shows it, and as the events about a webhook carry it.

Here, below the domain, because both write it: the API (``domain.webhooks``) and the worker when
it disables a webhook (``delivery.manager.disable_webhook``, the ``webhook.disabled`` event).
"""

from __future__ import annotations

from typing import Any

from hookline.timeutil import iso

SECRET_PREFIX = "whsec_"  # noqa: S105 (a public prefix, not a secret)
MASKED_SECRET = SECRET_PREFIX + "********"


def webhook_out(row: Any, secret: str | None = None) -> dict[str, Any]:
    """The webhook object; ``secret`` is the plaintext to show, or masked when None."""
    return {
        "id": row.id,
        "url": row.url,
        "name": row.name,
        "events": list(row.events),
        "is_active": bool(row.is_active),
        "secret": secret if secret is not None else MASKED_SECRET,
        "disabled_reason": row.disabled_reason,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }
