"""Run the Alembic chain on the configured database (``hookline migrate``, and first start).

Alembic works on a SQLAlchemy connection, the only one SQLAlchemy opens in hookline: a sync
``sqlite3`` engine on SQLite (in a thread, with ``BEGIN IMMEDIATE`` so a concurrent writer
waits), an asyncpg engine on PostgreSQL (the only driver installed), both closed after use.
Everything else runs through ``storage.connector``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.pool import NullPool

from hookline.storage.connector import JSON_CODEC, SQLITE_PRAGMAS
from hookline.storage.db import Database

_HERE = Path(__file__).parent
T = TypeVar("T")


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config(str(_HERE / "alembic.ini"))
    config.set_main_option("script_location", str(_HERE / "migrations"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def run_sync(db: Database, work: Callable[[Connection], T]) -> T:
    """``work(connection)`` in one transaction on a SQLAlchemy connection to ``db``'s database."""
    url = make_url(db.url)
    if db.is_sqlite:
        return await asyncio.to_thread(_run_on_sqlite, url.database or ":memory:", work)
    # Imported here: SQLAlchemy's asyncio extension (and its ORM) costs ~0.25 s of every start
    # of a process that never runs a PostgreSQL migration (SQLite servers, most CLI commands).
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(
        url.set(drivername="postgresql+asyncpg"), poolclass=NullPool, **JSON_CODEC
    )
    try:
        async with engine.begin() as conn:
            return await conn.run_sync(work)
    finally:
        await engine.dispose()


def _run_on_sqlite(path: str, work: Callable[[Connection], T]) -> T:
    engine = create_engine(f"sqlite:///{path}", poolclass=NullPool, **JSON_CODEC)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy's documented recipe: the driver starts no transaction, the "begin" event
        # does, taking the write lock up front.
        dbapi_connection.isolation_level = None
        for pragma in SQLITE_PRAGMAS:
            dbapi_connection.execute(pragma)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    try:
        with engine.begin() as conn:
            return work(conn)
    finally:
        engine.dispose()


async def upgrade_to_head(db: Database) -> None:
    def _upgrade(connection: Connection) -> None:
        if connection.dialect.name == "postgresql":
            # Several processes may start at once on one PostgreSQL: one migrates, the rest wait.
            connection.execute(text("SELECT pg_advisory_xact_lock(7311031)"))
        command.upgrade(alembic_config(connection), "head")

    await run_sync(db, _upgrade)


def head_revision() -> str:
    """The revision this hookline's migrations end at."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the migration chain has a head"
    return head


async def schema_revision(db: Database) -> str | None:
    """The database's current revision; None when it has no hookline schema (never migrated)."""

    def _current(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    return await run_sync(db, _current)
