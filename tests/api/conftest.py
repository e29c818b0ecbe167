"""Fixtures for API tests that run against an app with its delivery worker in process.

A module that uses ``http`` or ``owner`` defines ``worker_app`` itself, with the settings (retry
schedule, poll interval) its tests need.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import Account, new_account


@pytest.fixture
async def http(worker_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=worker_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as c:
        yield c


@pytest.fixture
async def owner(worker_app: FastAPI) -> Account:
    return await new_account(worker_app.state.db)
