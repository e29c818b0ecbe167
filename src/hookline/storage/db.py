"""Engines and transactions.

``Database.begin()`` opens a write transaction and ``Database.read()`` a read-only one; the caller
decides where a transaction starts and ends, and the domain functions it calls never commit.

On SQLite every write goes through one connection with ``BEGIN IMMEDIATE``: SQLite has a single
writer anyway, and taking the write lock up front turns "database is locked" errors in the middle
of a transaction into an orderly queue at the pool. Reads use their own pool and never wait for
writers (WAL).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from hookline.settings import Settings

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    # FULL: an acknowledged write survives power loss too, not just a process crash.
    "PRAGMA synchronous=FULL",
    "PRAGMA busy_timeout=10000",
    "PRAGMA foreign_keys=ON",
)


def async_url(database_url: str) -> str:
    """``sqlite:///x`` / ``postgresql://...`` as the async driver URL SQLAlchemy needs."""
    url = make_url(database_url)
    if url.drivername in ("sqlite", "sqlite+pysqlite"):
        return str(url.set(drivername="sqlite+aiosqlite"))
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg2", "postgresql+psycopg"):
        return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    return url.render_as_string(hide_password=False)


def _sqlite_engine(url: str, *, pool_size: int, immediate: bool) -> AsyncEngine:
    engine = create_async_engine(
        url, pool_size=pool_size, max_overflow=0, pool_timeout=60, pool_pre_ping=False
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin (see module doc).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class Database:
    """The process's engines; created once at start-up and shared by every request."""

    def __init__(self, settings: Settings) -> None:
        self.url = async_url(settings.database_url)
        self.is_sqlite = not settings.is_postgres
        if self.is_sqlite:
            self.writer = _sqlite_engine(self.url, pool_size=1, immediate=True)
            self.reader = _sqlite_engine(self.url, pool_size=4, immediate=False)
        else:
            self.writer = create_async_engine(
                self.url, pool_size=settings.db_pool_size, max_overflow=settings.db_pool_size
            )
            self.reader = self.writer

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction: commits when the block ends, rolls back on an exception."""
        async with self.writer.begin() as conn:
            yield conn

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self.reader.connect() as conn:
            yield conn

    async def ping(self) -> None:
        from sqlalchemy import text

        async with self.read() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.writer.dispose()
        if self.reader is not self.writer:
            await self.reader.dispose()
