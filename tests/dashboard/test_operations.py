"""The webhook page's statistics and chart, and "Recover…" with its count before it queues."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select

from hookline.delivery import manager, stats
from hookline.domain.events import record_event
from hookline.storage.db import Database
from hookline.storage.models import deliveries, users
from hookline.timeutil import utcnow
from tests.dashboard.conftest import Dash


async def _account_id(db: Database, email: str) -> str:
    async with db.read() as conn:
        row = (await conn.execute(select(users.c.account_id).where(users.c.email == email))).one()
    return str(row.account_id)


async def _webhook(signed_in: Dash) -> tuple[str, str]:
    created = await signed_in.post(
        "/dashboard/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        token_from="/dashboard/webhooks/new",
    )
    assert created.status_code == 303, created.text
    path = created.headers["location"]
    return path, path.rsplit("/", 1)[1]


async def _statuses(db: Database, webhook_id: str) -> list[str]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(deliveries.c.status).where(deliveries.c.webhook_id == webhook_id)
        )
        return sorted(row.status for row in rows)


async def test_recover_shows_the_count_then_queues_it(signed_in: Dash, db: Database) -> None:
    account_id = await _account_id(db, signed_in.email)
    path, webhook_id = await _webhook(signed_in)
    async with db.begin() as conn:
        for name in ("Ada", "Grace"):
            await record_event(conn, account_id, "contact.created", {"first_name": name})
    await manager.dispatch_events(db, now=utcnow())  # the worker's fan-out, run here
    async with db.begin() as conn:
        await conn.execute(
            deliveries.update()
            .where(deliveries.c.webhook_id == webhook_id)
            .values(status="failed", next_attempt_at=None)
        )

    page = await signed_in.get(path)
    assert f'href="{path}/recover"' in page.text
    form = await signed_in.get(f"{path}/recover")
    assert form.status_code == 200 and 'type="datetime-local"' in form.text
    since = (utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    preview_url = f"{path}/recover?since={since}&until="
    preview = await signed_in.get(preview_url)
    assert re.search(r'id="recover-count"><strong>2</strong> deliveries', preview.text)
    assert await _statuses(db, webhook_id) == ["failed", "failed"]  # a preview changes nothing

    forged = await signed_in.http.post(f"{path}/recover", data={"since": since, "until": ""})
    assert forged.status_code == 403
    assert await _statuses(db, webhook_id) == ["failed", "failed"]

    done = await signed_in.post(
        f"{path}/recover", {"since": since, "until": ""}, token_from=preview_url
    )
    assert done.status_code == 303
    assert "Recovery queued 2 deliveries" in (await signed_in.get(done.headers["location"])).text
    assert await _statuses(db, webhook_id) == ["pending", "pending"]
    again = await signed_in.get(preview_url)
    assert re.search(r'id="recover-count"><strong>0</strong> deliveries', again.text)

    bad = await signed_in.get(f"{path}/recover?since=yesterday")
    assert bad.status_code == 422 and 'id="e-since"' in bad.text
    too_old = (utcnow() - timedelta(days=90)).strftime("%Y-%m-%dT%H:%M")
    old = await signed_in.get(f"{path}/recover?since={too_old}")
    assert old.status_code == 422 and "retention" in old.text


async def test_recover_of_a_disabled_webhook_is_refused(signed_in: Dash, db: Database) -> None:
    path, webhook_id = await _webhook(signed_in)
    assert await _statuses(db, webhook_id) == []
    assert (await signed_in.post(f"{path}/disable", {}, token_from=path)).status_code == 303
    since = (utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    refused = await signed_in.post(
        f"{path}/recover", {"since": since, "until": ""}, token_from=f"{path}/recover"
    )
    assert refused.status_code == 303
    assert "enable it first" in (await signed_in.get(refused.headers["location"])).text


async def test_other_accounts_recover_pages_are_404(signed_in: Dash, other_signed_in: Dash) -> None:
    path, _ = await _webhook(signed_in)
    assert (await other_signed_in.get(f"{path}/recover")).status_code == 404
    since = (utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    assert (await other_signed_in.get(f"{path}/recover?since={since}")).status_code == 404
    stolen = await other_signed_in.post(
        f"{path}/recover", {"since": since}, token_from="/dashboard/webhooks"
    )
    assert stolen.status_code == 404


async def test_the_webhook_page_shows_stats_and_an_svg_chart(signed_in: Dash, db: Database) -> None:
    path, webhook_id = await _webhook(signed_in)
    now = utcnow()
    facts = [
        stats.AttemptFacts(webhook_id, now - timedelta(hours=3), 200, 40),
        stats.AttemptFacts(webhook_id, now - timedelta(hours=3), 200, 60),
        stats.AttemptFacts(webhook_id, now - timedelta(hours=1), 500, 900),
    ]
    async with db.begin() as conn:
        await stats.add_to_rollups(conn, facts)
    page = await signed_in.get(path)
    assert page.status_code == 200
    section = page.text[page.text.index('id="stats"') :]
    assert "3 (2 succeeded, 1 failed)" in section and "66.7%" in section
    assert "200: 2" in section and "500: 1" in section
    svg = section[section.index("<svg") : section.index("</svg>")]
    assert svg.count('class="ok"') == 1 and svg.count('class="failed"') == 1
    assert "2 succeeded, 0 failed" in svg and "0 succeeded, 1 failed" in svg
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    # Axes, unit and legend: the scale's top is the tallest bar (2 attempts in one hour).
    chart = section[section.index('id="chart"') : section.index("</figure>")]
    assert re.search(r'class="chart-y"[^>]*><span>2</span><span>0</span>', chart), chart
    assert "each bar: attempts per hour" in chart
    assert "<span>24 hours ago</span><span>now</span>" in chart
    assert '<li class="ok">Succeeded</li><li class="failed">Failed</li>' in chart
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp


async def test_a_disabled_webhooks_page_says_mail_is_not_configured(
    signed_in: Dash, db: Database
) -> None:
    path, webhook_id = await _webhook(signed_in)
    async with db.begin() as conn:
        await manager.disable_webhook(
            conn, webhook_id, "the endpoint answered 410 Gone", now=utcnow()
        )
    page = await signed_in.get(path)
    assert "Disabled by hookline" in page.text and 'id="mail-notice"' in page.text
    assert "Mail is not configured" in page.text
