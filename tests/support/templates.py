"""Fresh databases already at the schema's head, copied from one migrated database per session.

Migrating a new database runs Alembic's whole chain: ~130 ms on SQLite and ~350 ms on
PostgreSQL here, paid by every test whose fixture makes a database per test (the delivery tests
alone make ~170 a run). A copy is a file copy (SQLite) or ``CREATE DATABASE ... TEMPLATE``
(PostgreSQL): the same contents the migration wrote, at the same revision. Tests of the
migrations themselves, and of what hookline does with an unmigrated database, keep using empty
databases (``make_database_url``, ``PostgresServer.create_database``).
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from tests.support.postgres import PostgresServer

POSTGRES_TEMPLATE = "hookline_at_head"


class MigratedDatabases:
    """Hands out migrated databases; each template is made on first use, once per session."""

    def __init__(
        self,
        directory: Path,
        settings_for: Callable[[str], Settings],
    ) -> None:
        self._directory = directory
        self._settings_for = settings_for
        self._sqlite_template: Path | None = None
        self._postgres_ready = False
        self._lock = asyncio.Lock()

    async def url(self, backend: str, directory: Path, request: pytest.FixtureRequest) -> str:
        """A new database on ``backend`` at the schema's head (SQLite: in ``directory``)."""
        if backend == "sqlite":
            path = directory / "hookline.db"
            shutil.copyfile(await self._sqlite(), path)
            return f"sqlite:///{path}"
        server: PostgresServer = request.getfixturevalue("pg_server")
        await self._postgres_template(server)
        return await server.acreate_database(template=POSTGRES_TEMPLATE)

    async def _sqlite(self) -> Path:
        async with self._lock:
            if self._sqlite_template is None:
                path = self._directory / "template.db"
                await self._migrate(f"sqlite:///{path}")
                # Closed, so the WAL is checkpointed into the file and a copy is the whole database.
                assert not path.with_name(path.name + "-wal").exists()
                self._sqlite_template = path
            return self._sqlite_template

    async def _postgres_template(self, server: PostgresServer) -> None:
        async with self._lock:
            if not self._postgres_ready:
                await self._migrate(await server.acreate_database(POSTGRES_TEMPLATE))
                self._postgres_ready = True

    async def _migrate(self, url: str) -> None:
        db = Database(self._settings_for(url))
        try:
            await upgrade_to_head(db)
        finally:
            await db.dispose()
