"""The contacts page's CSV import and export in a real browser (Chromium, headless) against the
real ``hookline serve``: a file with a new, an updated and a refused row gives a report of each,
and the pages fit a laptop and a phone."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from tests.support.browser import (
    LAPTOP,
    PHONE,
    assert_fits_both_widths,
    assert_fits_width,
    sign_up,
)
from tests.support.server import async_running_server

pytestmark = pytest.mark.slow

PASSWORD = "a long and unguessable passphrase"
HEADER = "first_name,last_name,phone_number,do_not_call,do_not_call_reason\n"


async def test_csv_import_reports_each_row(browser: Browser, tmp_path: Path) -> None:
    first = tmp_path / "first.csv"
    first.write_text(HEADER + "Ada,,+14155552671,,\n")
    second = tmp_path / "second.csv"
    second.write_text(
        HEADER + "Ada,Lovelace,+14155552671,true,asked not to be called\n"  # updated
        "Bob,,+14155550001,,\n"  # created
        "Eve,,not a number,,\n"  # refused
    )
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite"}
    async with async_running_server(env) as server:
        context = await browser.new_context(viewport=LAPTOP, base_url=server.base_url)
        page = await context.new_page()
        await sign_up(page, "ada@example.com", PASSWORD)

        for upload in (first, second):
            await page.goto("/dashboard/contacts")
            await page.get_by_label("CSV file").set_input_files(upload)
            await page.get_by_role("button", name="Import").click()
            await expect(page.get_by_role("heading", name="Import done")).to_be_visible()
        await expect(
            page.get_by_text("1 created, 1 updated, 0 unchanged, 1 refused")
        ).to_be_visible()
        report = page.locator("table.import-report tbody tr")
        await expect(report).to_have_count(3)
        await expect(report.nth(0)).to_contain_text("updated")
        await expect(report.nth(1)).to_contain_text("created")
        await expect(report.nth(2)).to_contain_text("refused")
        await expect(report.nth(2)).to_contain_text("phone_number:")
        for size in (PHONE, LAPTOP):
            await page.set_viewport_size(size)
            await assert_fits_width(page)

        await report.nth(0).get_by_role("link").click()
        await expect(page.get_by_text("asked not to be called")).to_be_visible()
        await assert_fits_both_widths(page, "/dashboard/contacts", tmp_path, "contacts")

        await page.goto("/dashboard/contacts")
        async with page.expect_download() as downloading:
            await page.get_by_role("link", name="Export CSV").click()
        saved = tmp_path / "export.csv"
        await (await downloading.value).save_as(saved)
        exported = saved.read_text()
        assert "Lovelace" in exported and "Bob" in exported and "Eve" not in exported
        await context.close()
