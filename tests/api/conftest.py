"""Fixtures for API tests that run against an app with its delivery worker in process.

``worker_app`` here runs with the default settings; a module whose tests need others (retry
schedule, poll interval) defines its own ``worker_app``, which replaces this one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from hookline.app import create_app
from tests.conftest import Account, make_database_url, make_settings, new_account


@pytest.fixture(scope="module")
async def worker_app(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[FastAPI]:
    url = make_database_url(backend, tmp_path_factory.mktemp("api"), request)
    app = create_app(make_settings(url, worker_in_process=True))
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture
async def http(worker_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=worker_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as c:
        yield c


@pytest.fixture
async def owner(worker_app: FastAPI) -> Account:
    return await new_account(worker_app.state.db)
