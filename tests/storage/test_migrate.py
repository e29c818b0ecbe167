"""Migrating an empty database gives exactly the schema the models declare, on both backends;
the last migration goes down and up again keeping every row."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, inspect, select, text
from sqlalchemy.engine import Connection

from hookline.storage.db import Database
from hookline.storage.migrate import alembic_config, run_sync, upgrade_to_head
from hookline.storage.models import (
    accounts,
    deliveries,
    delivery_attempts,
    events,
    metadata,
    webhooks,
)
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


@asynccontextmanager
async def _migrated(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Database]:
    """A fresh database on ``backend_name``, migrated to the head."""
    db = Database(make_settings(make_database_url(backend_name, tmp_path, request)))
    try:
        await upgrade_to_head(db)
        yield db
    finally:
        await db.dispose()


@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_migrations_produce_the_declared_schema(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with _migrated(backend_name, tmp_path, request) as db:
        await upgrade_to_head(db)  # idempotent: a second run changes nothing
        assert await run_sync(db, _diff) == []
        indexes = await run_sync(db, _index_names)
        declared = {str(ix.name) for table in metadata.tables.values() for ix in table.indexes}
        assert declared <= indexes


async def test_sqlite_connections_use_wal_and_foreign_keys(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async with _migrated("sqlite", tmp_path, request) as db, db.read() as conn:
        assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
        assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
        assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == 10000


_NOW = datetime(2026, 11, 28, 1, 30, tzinfo=UTC)


def _one_delivery_with_an_attempt(connection: Connection) -> None:
    connection.execute(accounts.insert(), {"id": "acc", "name": "a", "created_at": _NOW})
    connection.execute(
        webhooks.insert(),
        {
            "id": "wh",
            "account_id": "acc",
            "url": "http://127.0.0.1:9/h",
            "events": ["*"],
            "is_active": True,
            "secret_enc": "x",
            "created_at": _NOW,
            "updated_at": _NOW,
        },
    )
    connection.execute(
        events.insert(),
        {
            "id": "ev",
            "account_id": "acc",
            "type": "contact.created",
            "data": {"id": "c"},
            "created_at": _NOW,
            "dispatched": True,
        },
    )
    connection.execute(
        deliveries.insert(),
        {
            "id": "dl",
            "account_id": "acc",
            "webhook_id": "wh",
            "event_id": "ev",
            "event_type": "contact.created",
            "status": "pending",
            "attempts": 1,
            "created_at": _NOW,
            "updated_at": _NOW,
        },
    )
    connection.execute(
        delivery_attempts.insert(),
        {"delivery_id": "dl", "started_at": _NOW, "duration_ms": 3, "succeeded": False},
    )


def _rows(connection: Connection) -> tuple[int, int]:
    count = select(func.count())
    return (
        connection.execute(count.select_from(deliveries)).scalar_one(),
        connection.execute(count.select_from(delivery_attempts)).scalar_one(),
    )


def _down_to_0006(connection: Connection) -> None:
    command.downgrade(alembic_config(connection), "0006_claim_order")


def _has_created_at_index(connection: Connection) -> bool:
    indexes = {str(index["name"]) for index in inspect(connection).get_indexes("deliveries")}
    return "ix_deliveries_created_at" in indexes


@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_0007_goes_down_and_up_keeping_every_row(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # On SQLite a migration that rebuilt ``deliveries`` would cascade the delete of its rows to
    # ``delivery_attempts``: the attempt is the row that would go.
    async with _migrated(backend_name, tmp_path, request) as db:
        await run_sync(db, _one_delivery_with_an_attempt)
        await run_sync(db, _down_to_0006)
        assert await run_sync(db, _rows) == (1, 1)
        below = await run_sync(db, lambda c: MigrationContext.configure(c).get_current_revision())
        assert below == "0006_claim_order"
        assert await run_sync(db, _has_created_at_index)
        await upgrade_to_head(db)
        assert await run_sync(db, _rows) == (1, 1)
        assert not await run_sync(db, _has_created_at_index)
        assert await run_sync(db, _diff) == []


def _fillfactor(connection: Connection) -> str | None:
    options = connection.execute(
        text("SELECT reloptions FROM pg_class WHERE relname = 'deliveries'")
    ).scalar_one()
    return next((o.partition("=")[2] for o in options or [] if o.startswith("fillfactor=")), None)


def _down_to_0007(connection: Connection) -> None:
    command.downgrade(alembic_config(connection), "0007_delivery_rows")


@pytest.mark.parametrize("backend_name", BACKENDS)
async def test_0008_gives_deliveries_the_declared_fillfactor_and_goes_down_and_up(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    # Alembic's comparison does not look at storage parameters: the model's is checked here.
    declared = str(deliveries.dialect_options["postgresql"]["with"]["fillfactor"])
    async with _migrated(backend_name, tmp_path, request) as db:
        await run_sync(db, _one_delivery_with_an_attempt)
        if backend_name == "postgres":
            assert await run_sync(db, _fillfactor) == declared == "50"
        await run_sync(db, _down_to_0007)
        assert await run_sync(db, _rows) == (1, 1)
        if backend_name == "postgres":
            assert await run_sync(db, _fillfactor) is None
        await upgrade_to_head(db)
        assert await run_sync(db, _rows) == (1, 1)
        if backend_name == "postgres":
            assert await run_sync(db, _fillfactor) == declared
        assert await run_sync(db, _diff) == []
