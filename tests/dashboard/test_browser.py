"""The whole journey in a real browser (Debian's Chromium, headless, driven by Playwright)
against the real ``hookline serve`` and a real webhook receiver, then every page of the
dashboard, forms included, at laptop and phone width: nothing sticks out sideways and every
button and field is in sight. Their screenshots go to the test's temporary folder (the README's
come from tests/dashboard/test_newcomer.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect
from standardwebhooks import Webhook

from tests.support import browser as support
from tests.support.browser import (
    LAPTOP,
    PHONE,
    assert_fits_both_widths,
    assert_fits_width,
    reload_until_visible,
    sign_up,
)
from tests.support.receiver import Receiver
from tests.support.server import async_running_server
from tests.support.waiting import eventually

pytestmark = pytest.mark.slow

PASSWORD = "a long and unguessable passphrase"


CLOSED_PORT_URL = "http://127.0.0.1:9/nobody-listens"
LONG_HEADER = "X-A-Rather-Long-Gateway-Authorisation-Header-Name"


async def test_journey(browser: Browser, tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()

    async def shot(page: Page, name: str) -> None:
        await support.shot(page, pages, name)

    env = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite",
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
        # No automatic retry during the test: the second attempt is the one the person asks for.
        "HOOKLINE_RETRY_SCHEDULE": "3600",
    }
    async with (
        Receiver() as receiver,
        async_running_server(env) as server,
        httpx.AsyncClient(base_url=server.base_url) as api,
    ):
        context = await browser.new_context(viewport=LAPTOP, base_url=server.base_url)
        await context.grant_permissions(
            ["clipboard-read", "clipboard-write"], origin=server.base_url
        )
        page = await context.new_page()

        # Sign up.
        await page.goto("/dashboard")
        await expect(page).to_have_url(f"{server.base_url}/dashboard/login?next=%2Fdashboard")
        await page.get_by_role("link", name="Create an account").click()
        await page.get_by_label("Email").fill("ada@example.com")
        await page.get_by_label("Password", exact=True).fill(PASSWORD)
        await page.get_by_label("Password again").fill(PASSWORD)
        await page.get_by_role("button", name="Create account").click()
        await expect(page.get_by_text("Welcome to hookline")).to_be_visible()
        await shot(page, "overview")

        # Create an API key; the full key is on the page once, with a working copy button.
        await (
            page.get_by_role("navigation", name="Main").get_by_role("link", name="API keys").click()
        )
        await page.get_by_label("Name").fill("journey test")
        await page.get_by_role("button", name="Create key").click()
        key = await page.get_by_label("Your new API key").input_value()
        assert key.startswith("hl_live_")
        await page.get_by_role("button", name="Copy").click()
        await expect(page.get_by_role("button", name="Copied")).to_be_visible()
        assert await page.evaluate("navigator.clipboard.readText()") == key
        await shot(page, "api-keys")
        auth = {"Authorization": f"Bearer {key}"}
        assert (await api.get("/v1/contacts", headers=auth)).status_code == 200

        # Subscribe the receiver; the endpoint fails at first, to show why in the log.
        receiver.respond(500, body="database is down, sorry")
        await page.get_by_role("link", name="Webhooks").first.click()
        await page.get_by_role("link", name="Add a webhook").click()
        await page.get_by_label("Endpoint URL").fill(receiver.url)
        await page.get_by_label("Name").fill("CRM sync")
        await page.get_by_label("call.started").uncheck()
        await page.get_by_label("call.completed").uncheck()
        await page.get_by_role("button", name="Create webhook").click()
        secret = await page.get_by_label("Signing secret").input_value()
        assert secret.startswith("whsec_")
        webhook_url = page.url

        # A contact created through the API is delivered, signed.
        created = await api.post(
            "/v1/contacts",
            headers=auth,
            json={"first_name": "Grace", "last_name": "Hopper", "phone_number": "+15551234567"},
        )
        assert created.status_code == 201, created.text
        first = (await receiver.wait_for(1, timeout=20))[0]
        assert first.json()["type"] == "contact.created"
        Webhook(secret).verify(first.body, first.headers)

        # The delivery and its failed attempt, with the receiver's answer.
        await page.goto(webhook_url)
        await reload_until_visible(page, page.locator(".badge-failed, .badge-pending"))
        await page.get_by_role("link", name="contact.created").first.click()
        await reload_until_visible(page, page.get_by_text("Attempt 1"))
        await expect(page.get_by_text("HTTP 500").first).to_be_visible()
        # A failed attempt's response body is open from the start: it usually says why.
        await expect(page.get_by_text("database is down, sorry")).to_be_visible()

        # Retry once the endpoint is fixed: a second, successful attempt.
        receiver.reset()
        await page.get_by_role("button", name="Retry now").click()
        await expect(page.get_by_text("Retry queued")).to_be_visible()
        await receiver.wait_for(2, timeout=20)
        await reload_until_visible(page, page.get_by_text("Attempt 2"))
        await expect(page.locator(".attempt.ok")).to_have_count(1)
        await shot(page, "delivery")
        await page.goto(webhook_url)
        await expect(page.locator("tbody .badge-succeeded")).to_be_visible()
        await shot(page, "webhook")

        # The other pages people look at.
        await page.goto("/dashboard/webhooks")
        await expect(page.get_by_text("CRM sync")).to_be_visible()
        await shot(page, "webhooks")
        await page.goto("/dashboard/contacts")
        await expect(page.get_by_role("link", name="Grace Hopper")).to_be_visible()
        await shot(page, "contacts")
        await page.goto("/dashboard/events")
        await shot(page, "events")

        # A second webhook, to a port nobody listens on, with a custom header: its attempt got
        # no response, which the delivery page says in one line.
        await page.goto("/dashboard/webhooks/new")
        await page.get_by_label("Endpoint URL").fill(CLOSED_PORT_URL)
        await page.get_by_label("Header 1").fill(LONG_HEADER)
        await page.get_by_label("Value 1").fill("s3cret")
        await page.get_by_role("button", name="Create webhook").click()
        await expect(page.get_by_label("Signing secret")).to_be_visible()
        silent_url = page.url
        await page.get_by_role("button", name="Send test event").click()
        await reload_until_visible(page, page.locator("tbody .badge-failed, tbody .badge-pending"))
        await page.get_by_role("link", name="webhook.test").first.click()
        await reload_until_visible(page, page.get_by_text("Attempt 1"))
        no_response = page.locator(".attempt .no-response")
        await expect(no_response).to_have_count(1)
        await expect(no_response).to_have_text(re.compile(r"^No response: connection failed"))
        await expect(page.locator(".attempt")).not_to_contain_text("Empty response body")
        await expect(page.locator(".attempt")).not_to_contain_text("no response")
        silent_delivery_url = page.url

        # A call, for the calls pages.
        called = await api.post(
            "/v1/calls",
            headers=auth,
            json={"call_type": "inbound", "customer_phone_number": "+15551234567"},
        )
        assert called.status_code == 201, called.text
        call_id = called.json()["id"]
        contact_id = created.json()["id"]
        event_id = first.json()["id"]

        # The receiver check's report (answered by a receiver that accepts everything).
        await page.goto(webhook_url)
        await page.get_by_role("button", name="Check receiver").click()
        await expect(page.get_by_role("heading", name="Receiver check")).to_be_visible()
        await assert_fits_width(page)
        await page.set_viewport_size(PHONE)
        await assert_fits_width(page)
        await shot(page, "conformance-phone")
        await page.set_viewport_size(LAPTOP)

        # Every page, forms included, at both widths.
        await page.goto("/dashboard/keys")
        revoke_href = await page.get_by_role(
            "link", name="Revoke the key journey test"
        ).get_attribute("href")
        assert revoke_href is not None
        since = "2026-01-01T00:00"
        every_page = {
            "overview": "/dashboard",
            "keys": "/dashboard/keys",
            "key-revoke": revoke_href,
            "webhooks": "/dashboard/webhooks",
            "webhook-new": "/dashboard/webhooks/new",
            "webhook": webhook_url,
            "webhook-silent": silent_url,
            "webhook-edit": f"{silent_url}/edit",
            "webhook-recover": f"{webhook_url}/recover",
            "webhook-recover-count": f"{webhook_url}/recover?since={since}&until=",
            "webhook-rotate": f"{webhook_url}/rotate-secret",
            "webhook-delete": f"{webhook_url}/delete",
            "delivery": silent_delivery_url,
            "contacts": "/dashboard/contacts",
            "contact-new": "/dashboard/contacts/new",
            "contact": f"/dashboard/contacts/{contact_id}",
            "contact-edit": f"/dashboard/contacts/{contact_id}/edit",
            "contact-delete": f"/dashboard/contacts/{contact_id}/delete",
            "calls": "/dashboard/calls",
            "call": f"/dashboard/calls/{call_id}",
            "events": "/dashboard/events",
            "event": f"/dashboard/events/{event_id}",
            "team": "/dashboard/team",
            "settings": "/dashboard/settings",
            "not-found": "/dashboard/no-such-page",
        }
        for name, url in every_page.items():
            await assert_fits_both_widths(page, url, pages, name)

        # Revoke the key (with a confirmation step) and the API refuses it at once.
        await page.goto("/dashboard/keys")
        await page.get_by_role("link", name="Revoke the key journey test").click()
        await page.get_by_role("button", name="Revoke key").click()
        await expect(page.get_by_text("The API key was revoked.")).to_be_visible()
        assert (await api.get("/v1/contacts", headers=auth)).status_code == 401

        # Readable on a phone too.
        phone_page = await context.new_page()
        await phone_page.set_viewport_size(PHONE)
        await phone_page.goto(webhook_url)
        await expect(phone_page.get_by_role("heading", name="CRM sync")).to_be_visible()
        await assert_fits_width(phone_page)
        await shot(phone_page, "webhook-phone")
        await context.close()


async def test_an_invitation_opened_while_logged_in_asks_before_switching(
    browser: Browser, tmp_path: Path
) -> None:
    """Bob, logged in to his own account, opens Ada's invitation for Carol: the page names
    both accounts, and only his click logs him out before Carol chooses her password."""
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite"}
    async with async_running_server(env, worker=False) as server:
        ada = await _signed_up(browser, server.base_url, "ada@example.com")
        await ada.goto("/dashboard/team")
        await ada.get_by_label("Email").fill("carol@example.com")
        await ada.get_by_role("button", name="Send invitation").click()
        printed_notice = ada.get_by_text("No mail server is configured: the invitation for carol")
        await expect(printed_notice).to_be_visible()

        async def printed() -> list[str]:
            return re.findall(
                r"invitation link for carol@example\.com.*?: \S+?(/dashboard/join/\S+)",
                server.logs(),
            )

        (join,) = await eventually(printed)
        bob = await _signed_up(browser, server.base_url, "bob@example.com")
        await bob.goto(join)
        await expect(bob.get_by_role("heading")).to_have_text(
            'Join "ada@example.com" as carol@example.com?'
        )
        await expect(bob.get_by_text('in the account "bob@example.com"')).to_be_visible()
        await expect(bob.get_by_label("Password", exact=True)).to_have_count(0)
        await bob.get_by_role("link", name="Cancel").click()
        await expect(bob.get_by_role("navigation", name="Main")).to_be_visible()  # still Bob

        await bob.goto(join)
        await bob.get_by_role("button", name="Log out bob@example.com and continue").click()
        await expect(bob.get_by_text("You were invited as carol@example.com")).to_be_visible()
        await bob.get_by_label("Password", exact=True).fill(PASSWORD)
        await bob.get_by_label("Password again").fill(PASSWORD)
        await bob.get_by_role("button", name="Join").click()
        await expect(bob.get_by_text("Welcome to the team!")).to_be_visible()
        await bob.goto("/dashboard/team")
        await expect(bob.get_by_text("ada@example.com")).to_be_visible()


async def _signed_up(browser: Browser, base_url: str, email: str) -> Page:
    """A new browser context (its own cookies) signed up as ``email``."""
    context = await browser.new_context(viewport=LAPTOP, base_url=base_url)
    page = await context.new_page()
    await sign_up(page, email, PASSWORD)
    return page
