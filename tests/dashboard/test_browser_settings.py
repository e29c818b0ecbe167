"""The settings page's call analysis schema in a real browser (Chromium, headless) against the
real ``hookline serve``: a schema saved and shown, a refused one with the API's message next to
the field, and the page fits a laptop and a phone either way."""

from __future__ import annotations

import json
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
SCHEMA = {
    "type": "object",
    "properties": {
        "budget": {"type": "integer", "minimum": 0, "description": "Monthly budget, in dollars"},
        "stage": {"type": "string", "enum": ["new", "demo", "won", "a_rather_long_stage_name"]},
    },
    "required": ["budget"],
}
REFUSED = {
    "type": "object",
    "properties": {"an_unusually_long_property_name_for_a_phone": {"type": "string", "x": 1}},
}


async def test_the_call_analysis_schema_is_saved_shown_and_refused(
    browser: Browser, tmp_path: Path
) -> None:
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite"}
    async with async_running_server(env) as server:
        context = await browser.new_context(viewport=LAPTOP, base_url=server.base_url)
        page = await context.new_page()
        await sign_up(page, "ada@example.com", PASSWORD)

        await page.goto("/dashboard/settings")
        await page.get_by_label("Schema (JSON)").fill(json.dumps(SCHEMA))
        await page.get_by_role("button", name="Save schema").click()
        await expect(page.get_by_text("saved as version 1")).to_be_visible()
        shown = await page.get_by_label("Schema (JSON)").input_value()
        assert json.loads(shown) == SCHEMA and "\n  " in shown
        await assert_fits_both_widths(page, "/dashboard/settings", tmp_path, "settings")

        await page.get_by_label("Schema (JSON)").fill(json.dumps(REFUSED))
        await page.get_by_role("button", name="Save schema").click()
        error = page.locator("#e-analysis_schema")
        await expect(error).to_contain_text("keyword 'x' is not supported")
        for size in (PHONE, LAPTOP):
            await page.set_viewport_size(size)
            await assert_fits_width(page)
        await context.close()
