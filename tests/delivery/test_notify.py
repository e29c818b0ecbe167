"""A webhook disabled by hookline: one webhook.disabled at another subscribed endpoint and one
e-mail to each dashboard user of the account, through a real SMTP server."""

from __future__ import annotations

import pytest
from sqlalchemy import insert
from standardwebhooks import Webhook

from hookline import ids
from hookline.delivery import manager, notify
from hookline.storage.models import users
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env
from tests.support.receiver import Receiver
from tests.support.smtp import running_smtp


async def _user(env: Env, account: str, email: str) -> None:
    async with env.db.begin() as conn:
        await conn.execute(
            insert(users).values(
                id=ids.uuid7(), account_id=account, email=email, password_hash="-",
                created_at=utcnow(),
            )
        )  # fmt: skip


async def test_a_410_alerts_another_endpoint_once_and_mails_each_user_once(env: Env) -> None:
    account, stranger = await env.account(), await env.account()
    for email in ("ada@example.com", "grace@example.com"):
        await _user(env, account, email)
    await _user(env, stranger, "eve@example.com")
    with running_smtp() as smtp:
        async with Receiver() as gone, Receiver() as watcher:
            gone.respond(410)
            doomed, _ = await env.webhook(account, gone.url, ["contact.created"])
            watching, secret = await env.webhook(account, watcher.url, ["webhook.disabled"])
            await env.worker(
                smtp_url=smtp.url, mail_from="hookline <alerts@example.com>",
                public_url="https://hooks.example.com",
            )  # fmt: skip
            await env.event(account)
            [alert] = await watcher.wait_for(1)
            mails = {
                a: await smtp.catcher.wait_for(a) for a in ("ada@example.com", "grace@example.com")
            }
            payload = Webhook(secret).verify(alert.body, alert.headers)
            await env.delivery_where(lambda d: d.status == "succeeded", webhook_id=watching)

        assert payload["type"] == "webhook.disabled" and payload["data"]["id"] == doomed
        assert len(watcher.requests) == 1
        for [mail] in mails.values():
            assert gone.url in mail.text and "410" in mail.text
            assert f"https://hooks.example.com/dashboard/webhooks/{doomed}" in mail.links
            assert mail.message["From"] == "hookline <alerts@example.com>"
        assert len(smtp.catcher.messages) == 2  # one each; nobody of the other account
        assert smtp.catcher.to("eve@example.com") == []


async def test_without_smtp_the_mail_is_logged(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    account = await env.account()
    await _user(env, account, "ada@example.com")
    hook, _ = await env.webhook(account, "http://127.0.0.1:9/x")
    async with env.db.begin() as conn:
        await manager.disable_webhook(conn, hook, "the endpoint answered 410 Gone", now=utcnow())
    sent = await notify.mail_disabled_webhooks(env.settings(), env.db, [hook])
    assert sent == 1
    assert any("mail not sent" in r.getMessage() for r in caplog.records)
