"""/docs and /redoc work with no internet: everything they load comes from hookline itself."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, ConsoleMessage, Page

from tests.support.browser import block_other_origins, expect
from tests.support.server import ServerProcess, arun_cli, async_running_server

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


@dataclass(frozen=True)
class _Docs:
    server: ServerProcess
    key: str
    page: Page


@asynccontextmanager
async def _browsing(browser: Browser, tmp_path: Path) -> AsyncIterator[_Docs]:
    """A live server on a fresh SQLite file, an account's API key, and a browser page that may
    load nothing from another origin and must meet no policy refusal."""
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'docs.db'}"}
    async with async_running_server(env, worker=False) as server:
        created = await arun_cli("accounts", "create", "docs", env=env)
        assert created.returncode == 0, created.stderr
        page = await browser.new_page()
        blocked = await block_other_origins(page, server.base_url)
        refused = _watch_policy_violations(page)
        yield _Docs(server, json.loads(created.stdout)["api_key"], page)
        assert blocked == [], "the docs tried to load something from another origin"
        assert refused == []


@pytest.mark.slow
async def test_doc_pages_list_every_operation_with_other_origins_blocked(
    browser: Browser, tmp_path: Path
) -> None:
    async with _browsing(browser, tmp_path) as docs:
        base_url, page = docs.server.base_url, docs.page
        async with httpx.AsyncClient(base_url=base_url) as http:
            spec = (await http.get("/v1/openapi.json")).json()
        operation_ids = {
            operation["operationId"]
            for item in spec["paths"].values()
            for operation in item.values()
        }
        assert len(operation_ids) > 10

        await page.goto(base_url + "/docs")
        await page.locator(".opblock").first.wait_for()
        swagger_ids = await page.locator(".opblock").evaluate_all("els => els.map(e => e.id)")
        shown = {op for op in operation_ids if any(i.endswith("-" + op) for i in swagger_ids)}
        assert shown == operation_ids
        await page.get_by_text("/v1/contacts").first.wait_for()

        await page.goto(base_url + "/redoc")
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


@pytest.mark.slow
async def test_try_it_out_with_a_key_entered_in_authorize_answers_200(
    browser: Browser, tmp_path: Path
) -> None:
    async with _browsing(browser, tmp_path) as docs:
        page = docs.page
        async with httpx.AsyncClient(base_url=docs.server.base_url) as http:
            added = await http.post(
                "/v1/contacts",
                headers={"Authorization": f"Bearer {docs.key}"},
                json={"first_name": "Grace", "phone_number": "+14155552671"},
            )
            assert added.status_code == 201, added.text
        await page.goto(docs.server.base_url + "/docs")

        await page.locator(".auth-wrapper button.authorize").click()
        dialog = page.locator(".dialog-ux")
        await dialog.locator("input").fill(docs.key)
        await dialog.locator("button.authorize").click()
        await dialog.locator("button.btn-done").click()

        operation = page.locator("#operations-contacts-list_contacts")
        await operation.locator(".opblock-summary").click()
        await operation.locator("button.try-out__btn").click()
        await operation.locator("button.execute").click()
        live = operation.locator(".live-responses-table .response")
        await expect(live.locator(".response-col_status")).to_have_text("200", timeout=30_000)
        await expect(live.locator(".response-col_description")).to_contain_text("Grace")
