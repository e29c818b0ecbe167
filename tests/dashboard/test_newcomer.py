"""A newcomer's journey, end to end, in a real browser: what a new user does on the first day.

Open the bare address, sign up (a first try with every field wrong shows every error at once),
get an API key, find the account id on Settings and use it with the CLI, point a webhook at a
local receiver, create contacts with the key over HTTP, see the deliveries and the chart in the
dashboard, invite a teammate from the Team page who joins through the mailed link (a real SMTP
server catches the mail), and reset that teammate's forgotten password through the mailed link.
Every page seen is checked at laptop and phone width (390 px) for anything cut off sideways or
out of sight; those screenshots go to the test's temporary folder. The README's pictures go to
the ``screenshots`` folder (temporary unless ``--screenshots-dir``: ``make screenshots``).
"""

from __future__ import annotations

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
)
from tests.support.receiver import Receiver
from tests.support.server import arun_cli, async_running_server
from tests.support.smtp import SmtpServer, running_smtp

pytestmark = pytest.mark.slow

EMAIL = "newcomer@example.com"
PASSWORD = "tangerine orbit quietly fourteen"
TEAMMATE = "teammate@example.com"
TEAMMATE_PASSWORD = "copper lantern drifting eastward"
NEW_PASSWORD = "seven quiet harbours sleeping"
# Mailed links start with HOOKLINE_PUBLIC_URL; the test opens their paths on the test server.
PUBLIC_URL = "http://hookline.test"


async def _mailed_path(smtp: SmtpServer, to: str, count: int) -> str:
    """The path of the one link in the ``count``-th mail to ``to``."""
    mail = (await smtp.catcher.wait_for(to, count, within=20))[count - 1]
    (link,) = mail.links
    assert link.startswith(PUBLIC_URL + "/dashboard/"), link
    return link.removeprefix(PUBLIC_URL)


async def _in_viewport(page: Page, selector: str) -> bool:
    """Visible without scrolling."""
    box = await page.locator(selector).first.bounding_box()
    viewport = page.viewport_size
    assert box is not None and viewport is not None
    return box["y"] + box["height"] <= viewport["height"]


CONTACTS = (
    ("Ada", "Lovelace", "+14155552671"),
    ("Grace", "Hopper", "+14155552672"),
    ("Alan", "Turing", "+14155552673"),
)


async def test_a_newcomers_first_day(browser: Browser, tmp_path: Path, screenshots: Path) -> None:
    with running_smtp() as smtp:
        await _first_day(browser, tmp_path, screenshots, smtp)


async def _first_day(browser: Browser, tmp_path: Path, screenshots: Path, smtp: SmtpServer) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    env = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/hookline.db",
        # The receiver is on this machine (127.0.0.1), as a developer's own would be.
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
        "HOOKLINE_SMTP_URL": smtp.url,
        "HOOKLINE_MAIL_FROM": "hookline <noreply@hookline.test>",
        "HOOKLINE_PUBLIC_URL": PUBLIC_URL,
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
        seen: list[tuple[str, str]] = []

        # The bare address leads to the dashboard, which offers sign-up as plainly as log-in.
        await page.goto("/")
        await expect(page).to_have_url(f"{server.base_url}/dashboard/login?next=%2Fdashboard")
        log_in = page.get_by_role("button", name="Log in")
        sign_up = page.get_by_role("link", name="Create an account")
        await expect(log_in).to_be_visible()
        await expect(sign_up).to_be_visible()
        assert await _in_viewport(page, "a[href='/dashboard/signup']"), "sign-up below the fold"
        log_in_box, sign_up_box = await log_in.bounding_box(), await sign_up.bounding_box()
        assert log_in_box and sign_up_box
        assert sign_up_box["width"] == log_in_box["width"], "sign-up is a button as wide as log-in"
        icon = await page.locator("link[rel=icon]").get_attribute("href")
        assert icon is not None
        favicon = await api.get(icon)
        assert favicon.status_code == 200 and favicon.headers["content-type"] == "image/svg+xml"
        for url, name in (("/dashboard/login", "login"), ("/dashboard/forgot", "forgot")):
            await assert_fits_both_widths(page, url, pages, name)

        # Sign up: a first try with every field wrong says everything wrong at once.
        await page.goto("/dashboard/login")
        await sign_up.click()
        await page.get_by_label("Email").fill("newcomer.example.com")
        await page.get_by_label("Password", exact=True).fill("short")
        await page.get_by_label("Password again").fill("shorter")
        await page.get_by_role("button", name="Create account").click()
        for field in ("email", "password", "password_confirm"):
            await expect(page.locator(f"#e-{field}")).to_be_visible()
        await page.set_viewport_size(PHONE)
        await assert_fits_width(page)
        await support.shot(page, screenshots, "signup-errors-phone")
        await page.set_viewport_size(LAPTOP)
        await page.get_by_label("Email").fill(EMAIL)
        await page.get_by_label("Password", exact=True).fill(PASSWORD)
        await page.get_by_label("Password again").fill(PASSWORD)
        await page.get_by_role("button", name="Create account").click()
        await expect(page.get_by_text("Welcome to hookline")).to_be_visible()
        seen.append(("/dashboard", "overview"))

        # An API key, shown once.
        nav = page.get_by_role("navigation", name="Main")
        await nav.get_by_role("link", name="API keys").click()
        await page.get_by_label("Name").fill("my laptop")
        await page.get_by_role("button", name="Create key").click()
        key = await page.get_by_label("Your new API key").input_value()
        assert key.startswith("hl_live_")
        await support.shot(page, screenshots, "api-keys")
        auth = {"Authorization": f"Bearer {key}"}
        seen.append(("/dashboard/keys", "keys"))

        # Settings shows the account id, copyable, which the CLI takes to give someone a login.
        await nav.get_by_role("link", name="Settings").click()
        account_id = await page.get_by_label("Account id").input_value()
        assert account_id.startswith("acct_"), account_id
        await support.shot(page, screenshots, "settings")
        await page.get_by_role("button", name="Copy").click()
        await expect(page.get_by_role("button", name="Copied")).to_be_visible()
        assert await page.evaluate("navigator.clipboard.readText()") == account_id
        added = await arun_cli(
            "users", "add", "--account", account_id, "--email", "helper@example.com", env=env
        )
        assert added.returncode == 0, added.stderr
        assert added.stdout.startswith(f"{PUBLIC_URL}/dashboard/"), added.stdout
        seen.append(("/dashboard/settings", "settings"))

        # A webhook to the local receiver.
        await nav.get_by_role("link", name="Webhooks").click()
        await page.get_by_role("link", name="Add a webhook").click()
        await page.get_by_label("Endpoint URL").fill(receiver.url)
        await page.get_by_label("Name").fill("my receiver")
        await page.get_by_role("button", name="Create webhook").click()
        secret = await page.get_by_label("Signing secret").input_value()
        webhook_url = page.url
        seen += [("/dashboard/webhooks", "webhooks"), (webhook_url, "webhook")]

        # Contacts created with the key, over HTTP, reach the receiver, signed.
        created = []
        for first_name, last_name, phone_number in CONTACTS:
            body = {"first_name": first_name, "last_name": last_name, "phone_number": phone_number}
            answer = await api.post("/v1/contacts", headers=auth, json=body)
            assert answer.status_code == 201, answer.text
            created.append(answer.json()["id"])
        delivered = await receiver.wait_for(len(CONTACTS), timeout=20)
        for each in delivered:
            Webhook(secret).verify(each.body, each.headers)
        assert sorted(each.json()["data"]["id"] for each in delivered) == sorted(created)

        # ... and the dashboard shows the deliveries, the chart with its axes, and an attempt.
        await page.goto(webhook_url)
        succeeded = page.locator("tbody .badge-succeeded")
        await reload_until_visible(page, succeeded.nth(len(CONTACTS) - 1))  # each recorded
        chart = page.locator("#chart")
        # The y axis runs from 0 to the tallest bar (all of them, unless an hour began between).
        top, bottom = await chart.locator(".chart-y span").all_inner_texts()
        assert bottom == "0" and 1 <= int(top) <= len(CONTACTS), (top, bottom)
        await expect(chart.locator("figcaption")).to_contain_text("each bar: attempts per hour")
        await expect(chart.locator(".chart-x span")).to_have_text(["24 hours ago", "now"])
        await expect(chart.locator(".legend li")).to_have_text(["Succeeded", "Failed"])
        assert await chart.locator("rect.ok").count() in (1, 2)
        await support.shot(page, screenshots, "webhook")
        await page.set_viewport_size(PHONE)
        await support.shot(page, screenshots, "webhook-phone")
        await page.set_viewport_size(LAPTOP)
        await page.get_by_role("link", name="contact.created").first.click()
        await reload_until_visible(page, page.get_by_text("Attempt 1"))
        await expect(page.locator(".attempt.ok")).to_have_count(1)
        await support.shot(page, screenshots, "delivery")
        seen += [(page.url, "delivery"), ("/dashboard/contacts", "contacts")]
        await page.goto("/dashboard/contacts")
        await support.shot(page, screenshots, "contacts")
        await page.goto("/dashboard")
        await expect(page.locator(".steps li.done")).to_have_count(4)
        await support.shot(page, screenshots, "overview")
        seen += [("/dashboard/events", "events"), ("/dashboard/calls", "calls")]

        # Invite a teammate from the Team page; they join through the mailed link, on a phone.
        await nav.get_by_role("link", name="Team").click()
        await page.get_by_label("Their email").fill(TEAMMATE)
        await page.get_by_role("button", name="Send invitation").click()
        await expect(page.get_by_text(TEAMMATE).first).to_be_visible()
        seen.append(("/dashboard/team", "team"))
        teammate = await browser.new_context(viewport=PHONE, base_url=server.base_url)
        mate = await teammate.new_page()
        await mate.goto(await _mailed_path(smtp, TEAMMATE, 1))
        await expect(mate.get_by_text(TEAMMATE)).to_be_visible()
        await mate.get_by_label("Password", exact=True).fill(TEAMMATE_PASSWORD)
        await mate.get_by_label("Password again").fill(TEAMMATE_PASSWORD)
        await mate.get_by_role("button", name="Join").click()
        await expect(mate.get_by_text("Welcome to the team")).to_be_visible()
        await assert_fits_width(mate)
        # The same account: the webhook and the contact are theirs to see too.
        await (
            mate.get_by_role("navigation", name="Main").get_by_role("link", name="Webhooks").click()
        )
        await expect(mate.get_by_role("link", name="my receiver")).to_be_visible()

        # They forget their password: "Forgot your password?" mails a link; the new one works.
        await mate.get_by_role("button", name="Log out").click()
        await mate.get_by_role("link", name="Forgot your password?").click()
        await mate.get_by_label("Email").fill(TEAMMATE)
        await mate.get_by_role("button", name="Mail me a link").click()
        await mate.goto(await _mailed_path(smtp, TEAMMATE, 2))
        await mate.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
        await mate.get_by_label("Password again").fill(NEW_PASSWORD)
        await mate.get_by_role("button", name="Set the new password").click()
        await expect(mate.get_by_text("Your new password is set")).to_be_visible()
        await mate.get_by_role("button", name="Log out").click()
        await mate.goto("/dashboard/login")
        await mate.get_by_label("Email").fill(TEAMMATE)
        await mate.get_by_label("Password").fill(NEW_PASSWORD)
        await mate.get_by_role("button", name="Log in").click()
        await expect(mate.get_by_role("heading", name="Overview")).to_be_visible()
        await support.shot(mate, pages, "teammate-phone")
        await teammate.close()

        # Every page seen fits a laptop and a phone (or scrolls visibly where it is wide).
        for url, name in seen:
            await assert_fits_both_widths(page, url, pages, name)
        await page.set_viewport_size(PHONE)
        await page.goto("/dashboard/contacts")
        await expect(page.get_by_role("link", name="Ada Lovelace")).to_be_visible()
        await context.close()
