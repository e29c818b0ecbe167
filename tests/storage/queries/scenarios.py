"""What the random scenarios of the two-form tests share: an account's rows replaced, and the
exception that rolls a form's work back once it has been looked at."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert

from hookline import ids
from hookline.storage.db import Database
from hookline.storage.models import deliveries, events, webhooks


class RollBack(Exception):
    """Raised inside ``db.begin()`` to roll back what a form did."""


async def replace_rows(
    db: Database,
    account_id: str,
    hooks: Sequence[dict[str, Any]],
    made: Sequence[dict[str, Any]],
    rows: Sequence[dict[str, Any]],
) -> None:
    """The account's webhooks and events (and so deliveries) replaced by ``hooks``, events
    ``made`` and deliveries ``rows``."""
    async with db.begin() as conn:
        await conn.execute(delete(webhooks).where(webhooks.c.account_id == account_id))
        await conn.execute(delete(events).where(events.c.account_id == account_id))
        await conn.execute(insert(webhooks), list(hooks))
        if rows:
            await conn.execute(insert(events), list(made))
            await conn.execute(insert(deliveries), list(rows))


def webhook_row(account_id: str, now: datetime, **fields: Any) -> dict[str, Any]:
    """A webhook of the account (to a port nobody listens on), with ``fields`` set."""
    hook = ids.webhook_id()
    row = {
        "id": hook,
        "account_id": account_id,
        "url": f"http://127.0.0.1:9/{hook}",
        "events": ["contact.created"],
        "secret_enc": "sealed",
        "created_at": now,
        "updated_at": now,
    }
    return {**row, **fields}


def event_row(
    account_id: str, now: datetime, event_type: str, data: dict[str, Any]
) -> dict[str, Any]:
    """A dispatched event of the account."""
    return {
        "id": ids.event_id(),
        "account_id": account_id,
        "type": event_type,
        "data": data,
        "created_at": now,
        "dispatched": True,
    }
