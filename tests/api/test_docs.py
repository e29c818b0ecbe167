"""/docs and /redoc work with no internet: everything they load comes from hookline itself."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, ConsoleMessage, Page

from tests.support.browser import block_other_origins
from tests.support.server import async_running_server

DOC_PAGES = ("/docs", "/redoc")


@pytest.mark.parametrize("path", DOC_PAGES)
async def test_doc_pages_load_nothing_from_elsewhere_and_run_no_inline_script(
    client: httpx.AsyncClient, path: str
) -> None:
    page = await client.get(path)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    script_src = re.search(r"script-src ([^;]*)", policy)
    assert script_src and script_src.group(1).split() == ["'self'"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert re.findall(r"<script(?![^>]*\bsrc=)", page.text) == [], "an inline script"
    assert re.findall(r"(?:src|href)=\"(?!/)", page.text) == [], "an asset from another origin"
    for asset in re.findall(r"(?:src|href)=\"(/[^\"]+)\"", page.text):
        loaded = await client.get(asset)
        assert loaded.status_code == 200, asset
        assert len(loaded.content) > 0


async def test_asset_folder_serves_no_other_files(client: httpx.AsyncClient) -> None:
    for path in ("/docs/assets/../../settings.py", "/docs/assets/%2e%2e/docs.py", "/docs/assets/"):
        assert (await client.get(path)).status_code == 404, path


async def test_root_redirects_to_the_dashboard(client: httpx.AsyncClient) -> None:
    response = await client.get("/")
    assert response.status_code in (302, 307)
    assert response.headers["location"] == "/dashboard"


def _watch_policy_violations(page: Page) -> list[str]:
    refused: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # Anything the policy refuses is a page that breaks, or a console error that says so.
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    page.on("console", on_console)
    return refused


@pytest.mark.slow
async def test_doc_pages_list_every_operation_with_other_origins_blocked(
    browser: Browser, tmp_path: Path
) -> None:
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'docs.db'}"}
    async with async_running_server(env, worker=False) as server:
        async with httpx.AsyncClient(base_url=server.base_url) as http:
            spec = (await http.get("/v1/openapi.json")).json()
        operation_ids = {
            operation["operationId"]
            for item in spec["paths"].values()
            for operation in item.values()
        }
        assert len(operation_ids) > 10
        page = await browser.new_page()
        blocked = await block_other_origins(page, server.base_url)
        refused = _watch_policy_violations(page)

        await page.goto(server.base_url + "/docs")
        await page.locator(".opblock").first.wait_for()
        swagger_ids = await page.locator(".opblock").evaluate_all("els => els.map(e => e.id)")
        shown = {op for op in operation_ids if any(i.endswith("-" + op) for i in swagger_ids)}
        assert shown == operation_ids
        await page.get_by_text("/v1/contacts").first.wait_for()

        await page.goto(server.base_url + "/redoc")
        await page.locator("[data-section-id^='operation/']").first.wait_for()
        sections = await page.locator("[data-section-id^='operation/']").evaluate_all(
            "els => els.map(e => e.dataset.sectionId)"
        )
        # ReDoc also lists the OpenAPI webhooks (the event bodies a receiver gets).
        webhook_ids = {
            operation["operationId"]
            for item in spec["webhooks"].values()
            for operation in item.values()
        }
        assert len(webhook_ids) > 5
        assert {s.removeprefix("operation/") for s in sections} == operation_ids | webhook_ids
        assert blocked == [], "the docs tried to load something from another origin"
        assert refused == []
