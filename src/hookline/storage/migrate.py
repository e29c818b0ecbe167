"""Run the Alembic chain on the configured database (``hookline migrate``, and first start)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection

from hookline.storage.db import Database

_HERE = Path(__file__).parent


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config(str(_HERE / "alembic.ini"))
    config.set_main_option("script_location", str(_HERE / "migrations"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def upgrade_to_head(db: Database) -> None:
    def _upgrade(connection: Connection) -> None:
        command.upgrade(alembic_config(connection), "head")

    async with db.begin() as conn:
        if not db.is_sqlite:
            # Several processes may start at once on one PostgreSQL: one migrates, the rest wait.
            await conn.execute(text("SELECT pg_advisory_xact_lock(7311031)"))
        await conn.run_sync(_upgrade)


def head_revision() -> str:
    """The revision this hookline's migrations end at."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the migration chain has a head"
    return head


async def schema_revision(db: Database) -> str | None:
    """The database's current revision; None when it has no hookline schema (never migrated)."""

    def _current(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    async with db.read() as conn:
        return await conn.run_sync(_current)
