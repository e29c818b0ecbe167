"""The webhook form's routing fields: custom headers (masked, removable), filter, rate limit."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select, update

from hookline.crypto import SecretBox
from hookline.domain.webhook_routing import unseal
from hookline.storage.db import Database
from hookline.storage.models import webhooks
from hookline.timeutil import utcnow
from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.conftest import Dash

FILTER = '"vip" in event.data.tags'


async def _stored(db: Database, webhook_id: str) -> tuple[dict[str, str], str | None, int | None]:
    async with db.read() as conn:
        row = (await conn.execute(select(webhooks).where(webhooks.c.id == webhook_id))).one()
    return unseal(SecretBox(TEST_SECRET_KEY), row.headers_enc), row.filter, row.rate_limit


async def test_routing_fields_are_created_shown_masked_and_edited(
    signed_in: Dash, db: Database
) -> None:
    created = await signed_in.post(
        "/dashboard/webhooks",
        {
            "url": "http://127.0.0.1:9/hook",
            "events": ["contact.created"],
            "header_name_0": "X-Api-Key",
            "header_value_0": "gw-secret-1",
            "header_name_1": "X-Tenant",
            "header_value_1": "acme",
            "filter": FILTER,
            "rate_limit": "25",
        },
        token_from="/dashboard/webhooks/new",
    )
    assert created.status_code == 303, created.text
    path = created.headers["location"]
    webhook_id = path.rsplit("/", 1)[1]
    assert await _stored(db, webhook_id) == (
        {"X-Api-Key": "gw-secret-1", "X-Tenant": "acme"},
        FILTER,
        25,
    )
    page = (await signed_in.get(path)).text
    assert "X-Api-Key: ********" in page and "25 attempts per second" in page
    assert "gw-secret-1" not in page
    form = (await signed_in.get(f"{path}/edit")).text
    assert "gw-secret-1" not in form and 'value="X-Api-Key"' in form
    assert "25" in form and "&#34;vip&#34; in event.data.tags" in form

    edited = await signed_in.post(
        f"{path}/edit",
        {
            "url": "http://127.0.0.1:9/hook",
            "events": ["contact.created"],
            "remove_header": "X-Tenant",
            "header_name_0": "X-Api-Key",
            "header_value_0": "gw-secret-2",
            "filter": "",
            "rate_limit": "",
        },
        token_from=f"{path}/edit",
    )
    assert edited.status_code == 303, edited.text
    assert await _stored(db, webhook_id) == ({"X-Api-Key": "gw-secret-2"}, None, None)


async def test_bad_routing_fields_redisplay_the_form_with_errors(
    signed_in: Dash, db: Database
) -> None:
    for fields, message in (
        ({"filter": "event.type =="}, "Syntax error"),
        ({"rate_limit": "0"}, "greater than or equal to 1"),
        ({"rate_limit": "ten"}, "valid integer"),
        ({"rate_limit": "9" * 5000}, "valid integer"),
        ({"header_name_0": "Host", "header_value_0": "x"}, "set by hookline"),
        ({"header_name_0": "X-A", "header_value_0": "a\r\nb"}, "CR, LF"),
    ):
        response = await signed_in.post(
            "/dashboard/webhooks",
            {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"], **fields},
            token_from="/dashboard/webhooks/new",
        )
        assert response.status_code == 422, fields
        assert message in response.text, (fields, response.text[-2000:])


async def test_the_form_needs_its_csrf_token(signed_in: Dash) -> None:
    response = await signed_in.http.post(
        "/dashboard/webhooks",
        data={"url": "http://127.0.0.1:9/hook", "events": "contact.created", "rate_limit": "5"},
    )
    assert response.status_code == 403


async def test_check_receiver_button_shows_the_report(signed_in: Dash) -> None:
    from tests.support.receiver import Receiver

    async with Receiver() as receiver:
        created = await signed_in.post(
            "/dashboard/webhooks",
            {"url": receiver.url, "events": ["contact.created"]},
            token_from="/dashboard/webhooks/new",
        )
        path = created.headers["location"]
        assert "Check receiver" in (await signed_in.get(path)).text
        report = await signed_in.post(f"{path}/conformance", {}, token_from=path)
        assert report.status_code == 200
        assert "Failed:</strong> bad_signature, stale_timestamp, tampered_body" in report.text
        assert len(receiver.requests) == 5
        # Without the CSRF token nothing is sent.
        refused = await signed_in.http.post(f"{path}/conformance", data={})
        assert refused.status_code == 403 and len(receiver.requests) == 5


async def test_the_buttons_show_the_webhooks_budget_when_it_is_used_up(
    signed_in: Dash, db: Database
) -> None:
    """A second receiver check within 10 s, and a test send while the rate limit's window is
    full, send nothing and say why and when to try again (the API's 429, through the same
    domain rule)."""
    from tests.support.receiver import Receiver

    async with Receiver() as receiver:
        created = await signed_in.post(
            "/dashboard/webhooks",
            {"url": receiver.url, "events": ["contact.created"], "rate_limit": "5"},
            token_from="/dashboard/webhooks/new",
        )
        path = created.headers["location"]
        assert (await signed_in.post(f"{path}/conformance", {}, token_from=path)).status_code == 200
        again = await signed_in.post(f"{path}/conformance", {}, token_from=path)
        assert again.status_code == 303 and again.headers["location"].endswith(path)
        page = (await signed_in.get(path)).text
        assert "Not sent: This webhook&#39;s receiver was checked less than 10 s ago" in page
        assert "Try again in " in page
        # A window filled up to a minute from now (as a flood of deliveries would fill it).
        later = int((utcnow() + timedelta(minutes=1)).timestamp() * 1_000_000)
        async with db.begin() as conn:
            await conn.execute(
                update(webhooks)
                .where(webhooks.c.id == path.rsplit("/", 1)[-1])
                .values(rate_starts=[[later, 5]])
            )
        refused = await signed_in.post(f"{path}/test", {}, token_from=path)
        assert refused.status_code == 303
        page = (await signed_in.get(path)).text
        assert "Not sent: This webhook&#39;s rate_limit (5 a second) is used up" in page
        assert re.search(r"Try again in 6[01] s\.", page)
        assert len(receiver.requests) == 5
