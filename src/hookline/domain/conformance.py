"""The receiver check of one of an account's webhooks (``delivery.conformance``), for
``POST /v1/webhooks/{id}/conformance`` and the dashboard's "Check receiver"."""

from __future__ import annotations

from hookline.crypto import SecretBox
from hookline.delivery.conformance import check_receiver
from hookline.delivery.sender import Sender
from hookline.domain.webhooks import probe_target
from hookline.errors import NotFound
from hookline.settings import Settings
from hookline.storage.db import Database


async def run_check(
    settings: Settings, db: Database, box: SecretBox, account_id: str, webhook_id: str
) -> dict[str, object]:
    """The report for one of the account's webhooks; ``NotFound`` for another's. The probes
    (up to 30 s of network) run after the read, holding no connection."""
    async with db.read() as conn:
        target = await probe_target(conn, account_id, webhook_id, box=box)
    if target is None:
        raise NotFound(f"No webhook with id {webhook_id}.")
    sender = Sender(settings)
    await sender.start()
    try:
        return await check_receiver(sender, target)
    finally:
        await sender.close()
