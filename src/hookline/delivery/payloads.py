"""The webhook object as the API shows it, and as the events about a webhook carry it.

Here, below the domain, because both write it: the API (``domain.webhooks``) and the worker when
it disables a webhook (``delivery.manager.disable_webhook``, the ``webhook.disabled`` event).
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
    """The webhook object; ``secret`` is the plaintext to show, or masked when None."""
    return {
        "id": row.id,
        "url": row.url,
        "name": row.name,
        "events": list(row.events),
        "is_active": bool(row.is_active),
        "secret": secret if secret is not None else MASKED_SECRET,
        "disabled_reason": row.disabled_reason,
        "headers": masked_headers(row.header_names),
        "filter": row.filter,
        "rate_limit": row.rate_limit,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }
