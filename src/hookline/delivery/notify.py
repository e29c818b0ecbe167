"""E-mail to each dashboard user of an account when hookline disables one of its webhooks.

Sent after the transaction that disabled the webhook (and wrote its ``webhook.disabled`` event)
committed, never inside it: SMTP is the network. Mail is a courtesy on top of that event, which
is the durable alert: a worker that dies between the commit and the mail sends no mail, and an
SMTP server that refuses is logged, not retried. Without ``HOOKLINE_SMTP_URL`` the mail goes to
the log (``mail.send``), and the webhook's dashboard page says mail is not configured.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hookline import mail
from hookline.delivery import manager
from hookline.settings import Settings
from hookline.storage.db import Database

log = logging.getLogger("hookline.delivery")


def disabled_mail(settings: Settings, webhook: Any) -> tuple[str, str]:
    """(subject, text) of the mail about ``webhook``, a row of ``manager.disabled_webhooks``."""
    label = webhook.name or webhook.url
    page = f"{settings.public_url.rstrip('/')}/dashboard/webhooks/{webhook.id}"
    subject = f"hookline disabled your webhook {label}"
    text = (
        f"hookline stopped sending events to {webhook.url} ({webhook.id}).\n\n"
        f"Why: {webhook.disabled_reason}\n\n"
        "Nothing is sent to it while it is disabled. Fix the endpoint, enable the webhook again, "
        "then use Recover... on its page to send what it missed:\n"
        f"{page}\n"
    )
    return subject, text


async def mail_disabled_webhooks(
    settings: Settings, db: Database, webhook_ids: Sequence[str]
) -> int:
    """Mail every user of each disabled webhook's account; returns how many mails were sent
    (or logged). Failures are logged: the webhook.disabled event already went out."""
    sent = 0
    async with db.read() as conn:
        webhooks = await manager.disabled_webhooks(conn, webhook_ids)
        recipients = {
            row.id: await mail.account_user_emails(conn, row.account_id) for row in webhooks
        }
    for webhook in webhooks:
        subject, text = disabled_mail(settings, webhook)
        try:
            await mail.send(settings, recipients[webhook.id], subject, text)
        except mail.MailError:
            log.warning(
                "could not mail the users about disabled webhook %s", webhook.id, exc_info=True
            )
            continue
        sent += len(recipients[webhook.id])
    return sent
