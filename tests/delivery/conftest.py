"""Fixtures for the delivery tests: a migrated database per test, on SQLite (a file in tmp_path)
and on a real PostgreSQL (the session's cluster, ``pg_server`` from tests/conftest.py; one
database per test), each a copy of the session's migrated template (tests/support/templates.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hookline.crypto import SecretBox
from hookline.settings import Settings
from hookline.storage.db import Database
from tests.conftest import BACKENDS
from tests.delivery.helpers import Env
from tests.support.templates import MigratedDatabases

SECRET_KEY = "delivery-tests-secret-key"


async def _env(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    migrated: MigratedDatabases = request.getfixturevalue("migrated")
    base: dict[str, Any] = {
        "database_url": await migrated.url(backend, tmp_path, request),
        "allow_private_targets": True,
        "secret_key": SECRET_KEY,
        "delivery_poll_seconds": 0.5,
        # Long waits by default: a test that wants retries says so.
        "retry_schedule": "60,60",
    }
    env = Env(base=base, db=Database(Settings(**base)), box=SecretBox(SECRET_KEY))
    try:
        yield env
    finally:
        for worker in env.workers:
            await worker.stop(grace=0)
        await env.db.dispose()


@pytest.fixture(params=BACKENDS)
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Env]:
    async for value in _env(request.param, tmp_path, request):
        yield value


@pytest.fixture
async def pg_env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Env]:
    """PostgreSQL only, for what only PostgreSQL has (LISTEN/NOTIFY)."""
    async for value in _env("postgres", tmp_path, request):
        yield value


@pytest.fixture
async def sqlite_env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Env]:
    """SQLite only, for what only its group commit does."""
    async for value in _env("sqlite", tmp_path, request):
        yield value
