"""The receiver check of one of an account's webhooks (``delivery.conformance``), for
``POST /v1/webhooks/{id}/conformance`` and the dashboard's "Check receiver"."""

from __future__ import annotations

from hookline.crypto import SecretBox
from hookline.delivery.conformance import check_receiver
from hookline.delivery.sender import Sender
from hookline.domain import outbound
from hookline.domain.webhooks import probe_target
from hookline.settings import Settings
from hookline.storage.db import Database


async def run_check(
    settings: Settings, db: Database, box: SecretBox, account_id: str, webhook_id: str
) -> dict[str, object]:
    """The report for one of the account's webhooks; ``NotFound`` for another's,
    ``RateLimited`` past its budget (``domain.outbound``), taken in one transaction with the
    read. The probes (up to 30 s of network) run after it, holding no connection."""
    async with db.begin() as conn:
        row = await outbound.held_webhook(conn, account_id, webhook_id)
        pace = await outbound.start_receiver_check(conn, row)
        target = probe_target(row, box=box, api_url=settings.public_url)
    sender = Sender(settings)
    await sender.start()
    try:
        return await check_receiver(sender, target, pace=pace)
    finally:
        await sender.close()
