"""``domain.deliveries`` against real migrated databases, SQLite and PostgreSQL: a webhook's
deliveries as the API and the dashboard see them, scoped to the account."""

from __future__ import annotations

from sqlalchemy import select

from hookline.delivery import manager
from hookline.delivery.retry import Decision
from hookline.domain import deliveries as deliveries_domain
from hookline.storage.models import events
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env
from tests.delivery.test_manager import DAY, URL, record, request


async def test_list_get_and_retry_for_the_api(env: Env) -> None:
    account, stranger = await env.account(), await env.account()
    hook, _ = await env.webhook(account, URL)
    for _ in range(3):
        await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    claims = await manager.claim_due(env.db, request())
    await manager.record_outcomes(
        env.db,
        "w1",
        [record(c, 500, Decision("failed")) for c in claims],
        now=utcnow(),
        disable_after=DAY,
    )

    async with env.db.read() as conn:
        page, cursor = await deliveries_domain.list_deliveries(conn, account, hook, limit=2)
        rest, end = await deliveries_domain.list_deliveries(
            conn, account, hook, limit=2, cursor=cursor
        )
        hidden, _ = await deliveries_domain.list_deliveries(conn, stranger, hook)
        detail = await deliveries_domain.get_delivery(conn, account, hook, claims[0].delivery_id)
        foreign = await deliveries_domain.get_delivery(conn, stranger, hook, claims[0].delivery_id)

    newest_first = [c.delivery_id for c in reversed(claims)]
    assert [d["id"] for d in page + rest] == newest_first and end is None
    assert hidden == [] and foreign is None
    assert set(page[0]) >= {
        "id",
        "event_id",
        "event_type",
        "status",
        "attempts",
        "last_status_code",
        "next_attempt_at",
        "created_at",
    }
    assert page[0]["status"] == "failed" and page[0]["last_status_code"] == 500
    assert page[0]["created_at"].endswith("Z")
    assert detail is not None
    [attempt] = detail["attempt_log"]
    assert attempt["status_code"] == 500 and attempt["response_body"] == "ok"
    assert attempt["attempted_at"].endswith("Z")

    async with env.db.begin() as conn:
        retried = await deliveries_domain.retry_delivery(
            conn, account, hook, claims[0].delivery_id, now=utcnow()
        )
        missing = await deliveries_domain.retry_delivery(
            conn, stranger, hook, claims[0].delivery_id, now=utcnow()
        )
    assert retried is not None and retried["status"] == "pending" and missing is None
    [again] = await manager.claim_due(env.db, request())
    assert (again.delivery_id, again.attempts) == (claims[0].delivery_id, 1)


async def test_the_exhausted_alert_carries_the_delivery_as_the_api_shows_it(env: Env) -> None:
    """One delivery object (``payloads.delivery_out``) for the API and the worker's
    ``delivery.exhausted`` event: a receiver of the alert sees what GET shows."""
    account = await env.account()
    hook, _ = await env.webhook(account, URL)
    await env.webhook(account, URL, ["delivery.exhausted"])
    await env.event(account)
    await manager.dispatch_events(env.db, now=utcnow())
    [claim] = await manager.claim_due(env.db, request())
    await manager.record_outcomes(
        env.db, "w1", [record(claim, 500, Decision("failed"))], now=utcnow(), disable_after=DAY
    )

    async with env.db.read() as conn:
        shown = await deliveries_domain.get_delivery(conn, account, hook, claim.delivery_id)
        exhausted = events.c.type == "delivery.exhausted"
        [carried] = (await conn.execute(select(events.c.data).where(exhausted))).scalars()
    assert shown is not None and shown.pop("attempt_log")
    assert carried == shown
