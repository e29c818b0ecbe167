"""A migrated PostgreSQL database per test, for running a statement's two forms on the same
rows (the claim's, the recorder's)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hookline.storage.db import Database
from tests.conftest import make_settings
from tests.support.templates import MigratedDatabases


@pytest.fixture
async def pg_db(
    migrated: MigratedDatabases, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Database]:
    db = Database(make_settings(await migrated.url("postgres", tmp_path, request)))
    try:
        yield db
    finally:
        await db.dispose()
