"""Migrating an empty database gives exactly the schema the models declare, on both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from hookline.storage.db import Database
from hookline.storage.migrate import run_sync, upgrade_to_head
from hookline.storage.models import metadata
from tests.conftest import BACKENDS, make_database_url, make_settings


def _diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))


def _index_names(connection: Connection) -> set[str]:
    inspector = inspect(connection)
    return {
        str(index["name"])
        for table in inspector.get_table_names()
        for index in inspector.get_indexes(table)
    }


@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_migrations_produce_the_declared_schema(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = Database(make_settings(make_database_url(backend_name, tmp_path, request)))
    try:
        await upgrade_to_head(db)
        await upgrade_to_head(db)  # idempotent: a second run changes nothing
        assert await run_sync(db, _diff) == []
        indexes = await run_sync(db, _index_names)
        declared = {str(ix.name) for table in metadata.tables.values() for ix in table.indexes}
        assert declared <= indexes
    finally:
        await db.dispose()


async def test_sqlite_connections_use_wal_and_foreign_keys(tmp_path: Path) -> None:
    from sqlalchemy import text

    db = Database(make_settings(f"sqlite:///{tmp_path / 'p.db'}"))
    try:
        await upgrade_to_head(db)
        async with db.read() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == 10000
    finally:
        await db.dispose()
