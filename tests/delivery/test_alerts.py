"""Alert events: written with the outcome that causes them, fanned out to every subscribed
webhook but the one they are about, and never about a delivery of an alert."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from hookline.delivery import manager
from hookline.delivery.retry import Decision
from hookline.storage.models import events
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env, ago
from tests.delivery.test_manager import record, request

URL = "http://127.0.0.1:9/hook"
DAY = timedelta(days=1)


async def _alerts(env: Env, event_type: str) -> list[dict[str, object]]:
    async with env.db.read() as conn:
        rows = await conn.execute(select(events).where(events.c.type == event_type))
        return [dict(row._mapping) for row in rows]


async def test_a_long_failure_disables_with_one_webhook_disabled_event(env: Env) -> None:
    account = await env.account()
    failing, _ = await env.webhook(account, URL, failing_since=ago(3 * 3600))
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    [claim] = await manager.claim_due(env.db, request())

    summary = await manager.record_outcomes(
        env.db,
        "w1",
        [record(claim, 500, Decision("pending", delay=60))],
        now=utcnow(),
        disable_after=timedelta(hours=2),
    )

    assert summary.disabled_webhooks == (failing,) and summary.alerts == 1
    [alert] = await _alerts(env, "webhook.disabled")
    assert alert["about_webhook_id"] == failing and alert["account_id"] == account
    data = alert["data"]
    assert isinstance(data, dict)
    assert data["id"] == failing and data["is_active"] is False
    assert data["secret"] == "whsec_********" and "failed for 2 hours" in data["disabled_reason"]
    assert await _alerts(env, "delivery.exhausted") == []  # the delivery was cancelled, not failed


async def test_an_alert_goes_to_other_subscribers_never_to_its_subject(env: Env) -> None:
    account = await env.account()
    kinds = ["contact.created", "delivery.exhausted"]
    subject, _ = await env.webhook(account, URL, kinds)
    watcher, _ = await env.webhook(account, URL, ["delivery.exhausted"])
    await env.webhook(account, URL, ["contact.created"])  # not subscribed to alerts
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    claim = next(c for c in await manager.claim_due(env.db, request()) if c.webhook_id == subject)

    summary = await manager.record_outcomes(
        env.db, "w1", [record(claim, 500, Decision("failed"))], now=utcnow(), disable_after=DAY
    )
    assert summary.alerts == 1
    [alert] = await _alerts(env, "delivery.exhausted")
    assert alert["about_webhook_id"] == subject
    data = alert["data"]
    assert isinstance(data, dict) and data["id"] == claim.delivery_id and data["status"] == "failed"

    await manager.dispatch_events(env.db, now=utcnow())
    alert_deliveries = [r for r in await env.deliveries() if r.event_id == alert["id"]]
    assert [r.webhook_id for r in alert_deliveries] == [watcher]

    # That alert's own delivery fails for good: no alert about an alert.
    [alert_claim] = [
        c for c in await manager.claim_due(env.db, request()) if c.event_id == alert["id"]
    ]
    again = await manager.record_outcomes(
        env.db,
        "w1",
        [record(alert_claim, 500, Decision("failed"))],
        now=utcnow(),
        disable_after=DAY,
    )
    assert again.alerts == 0 and len(await _alerts(env, "delivery.exhausted")) == 1
