"""A migrated PostgreSQL database per test, for running a statement's two forms on the same
rows (the claim's, the recorder's)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from tests.conftest import make_settings
from tests.support.postgres import PostgresServer


@pytest.fixture
async def pg_db(pg_server: PostgresServer) -> AsyncIterator[Database]:
    db = Database(make_settings(await pg_server.acreate_database()))
    await upgrade_to_head(db)
    try:
        yield db
    finally:
        await db.dispose()
