"""The database: transactions, as the caller decides them.

``Database.begin()`` opens a write transaction and ``Database.read()`` a connection for reads;
the caller decides where a transaction starts and ends, and the domain functions it calls never
commit. The backend's connector (``storage.connector``) owns the connections: ``sqlite3`` inline
with group commit, or an asyncpg pool.

The transaction does the bookkeeping: a transaction that recorded an event
(``storage.outbox.record_event``) wakes the delivery workers once it has committed
(``on_events_committed``), wherever it was opened, ``hold()`` included. Nobody wakes them by hand.
One exception, on SQLite: rows of an event that ``commit_rows`` wrote wake them before their
COMMIT, instead of after it, if that wakes this process's sleeping scheduler (``_wake_early``).

A request with an ``Idempotency-Key`` needs its reservation, its handler's writes and its stored
response in one transaction. ``Database.hold()`` gives it one (``HeldTransaction``) that every
``begin()`` block of the request's task joins, and that its owner commits once the response is
known (see ``guards.idempotency``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from hookline.settings import Settings
from hookline.storage.connector import (
    DRIVER_ERRORS,
    PG_CONNECT_TIMEOUT_SECONDS,
    Connection,
    Connector,
    PostgresConnector,
    SQLiteConnector,
)
from hookline.storage.deliverystore import (
    DeliveryStore,
    Outcomes,
    PostgresDeliveries,
    SQLiteDeliveries,
)
from hookline.storage.statements import JointRows, Params, Statement
from hookline.storage.wal import truncate_wal

log = logging.getLogger("hookline.storage")

READY_CONNECTIONS = 4
"""PostgreSQL: how many pooled connections a process readies for its statements as it starts
(``Database.ready``): as many as a moderate load uses at once."""

__all__ = [
    "DATABASE_ERRORS",
    "PG_CONNECT_TIMEOUT_SECONDS",
    "READY_CONNECTIONS",
    "Connection",
    "Database",
    "DeliveryStore",
    "Outcomes",
    "Preempted",
    "describe_database",
]

DATABASE_ERRORS: tuple[type[Exception], ...] = (OSError, SQLAlchemyError, *DRIVER_ERRORS)
"""What opening or migrating a database raises about the database itself (unreachable, refused,
not a database, a file it cannot open), from the drivers, Alembic's engine or the system: for
callers that turn it into a message (the CLI)."""


def describe_database(url: str) -> str:
    """``url`` for people: its password masked."""
    return make_url(url).render_as_string(hide_password=True)


_PING = text("SELECT 1")


class Database:
    """The process's connector and its transactions; created once at start-up and shared."""

    def __init__(self, settings: Settings) -> None:
        self.url = settings.database_url
        self.is_sqlite = not settings.is_postgres
        url = make_url(settings.database_url)
        self.connector: Connector
        self.deliveries: DeliveryStore
        """The delivery engine's statements for this backend (``storage.deliverystore``)."""
        if self.is_sqlite:
            self.connector = SQLiteConnector(
                url.database or ":memory:", early_wake=self._wake_early
            )
            self.deliveries = SQLiteDeliveries()
        else:
            dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
            # As many as SQLAlchemy's pool allowed (pool_size plus as many overflow).
            self.connector = PostgresConnector(dsn, 2 * settings.db_pool_size)
            self.deliveries = PostgresDeliveries()
        self.dialect = self.connector.dialect
        self._sqlite_file = Path(url.database) if self.is_sqlite and url.database else None
        self._wake: list[Callable[[], None]] = []
        self._asleep: dict[Callable[[], None], Callable[[], bool]] = {}

    async def empty_log(self) -> None:
        """Move what the write-ahead log holds into the database file and empty the log, so no
        older copy of an overwritten page stays in it (SQLite; PostgreSQL's WAL is its own
        affair). Best effort: a busy database is left to SQLite's own checkpoints."""
        if self._sqlite_file is not None:
            await asyncio.to_thread(truncate_wal, self._sqlite_file)

    def on_events_committed(
        self, callback: Callable[[], None], *, asleep: Callable[[], bool] | None = None
    ) -> None:
        """Call ``callback`` after every commit of a transaction that queued work for the
        delivery workers (``Connection.wakes_workers``): the wake-up (``delivery.wakeup``).
        ``asleep``: whether a scheduler that ``callback`` wakes sleeps in this process (see
        ``_wake_early``)."""
        self._wake.append(callback)
        if asleep is not None:
            self._asleep[callback] = asleep

    def off_events_committed(self, callback: Callable[[], None]) -> None:
        if callback in self._wake:
            self._wake.remove(callback)
        self._asleep.pop(callback, None)

    def events_committed(self) -> None:
        """Run the ``on_events_committed`` callbacks: what a commit that queued work does."""
        for callback in self._wake:
            callback()

    def _wake_early(self) -> bool:
        """SQLite: a group-commit batch holds rows of an event that it has not committed
        (``connector.EarlyWake``). If a scheduler of this process sleeps, wake the workers now
        and say so: its round, which needs the writer, can then run in that batch, one COMMIT
        for both (``connector._GroupCommit._let_the_round_join``), and the batch's callers wake
        nobody after it; a round that misses the batch runs after its COMMIT, so every woken
        worker, here or in another process, still finds the rows."""
        if not any(asleep() for asleep in self._asleep.values()):
            return False
        self.events_committed()
        return True

    async def fetch_one(self, statement: Statement, params: Params) -> Any | None:
        """One row of a one-statement read (the reader connection or the pool, autocommit)."""
        return await self.connector.fetch_one(statement, params)

    async def fetch_all(self, statement: Statement, params: Params) -> list[Any]:
        """Every row of one statement that is a transaction of its own: on PostgreSQL's pool,
        in autocommit, so one round trip with no BEGIN or COMMIT. PostgreSQL only: on SQLite a
        write must go through the single writer (``begin()``)."""
        if not isinstance(self.connector, PostgresConnector):
            raise RuntimeError("Database.fetch_all is for PostgreSQL; use begin() on SQLite")
        return (await self.connector.autocommit(statement, params)).all()

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[Connection]:
        """A write transaction: commits when the block ends, rolls back on an exception.

        Returns only once the work is committed. On SQLite the work may share its transaction
        with other callers' (group commit, see ``storage.connector``); it still commits or rolls
        back as one unit, and never sees another unit's uncommitted failure.

        Inside ``hold()``, in the task that holds it, the block joins the held transaction
        instead, and its work commits when the holder commits.
        """
        held = self._held()
        if held is not None:
            async with held.block() as conn:
                yield conn
            return
        async with self.connector.transaction() as conn:
            conn.wakes_workers = False  # a SQLite batch's connection serves every unit
            yield conn
            recorded = conn.wakes_workers
        if recorded:
            self.events_committed()

    @asynccontextmanager
    async def begin_apart(self) -> AsyncIterator[Connection]:
        """``begin()`` committing on its own even inside ``hold()``: for work committed in
        steps (a bulk upsert's batches) whose held transaction opens only at the end, to store
        the response. Refused once that transaction is open: on SQLite it would wait for it."""
        held = self._held()
        if held is not None and held.is_open:
            raise RuntimeError("begin_apart() inside an open held transaction")
        token = _HELD.set(None)
        try:
            async with self.begin() as conn:
                yield conn
        finally:
            _HELD.reset(token)

    def _held(self) -> HeldTransaction | None:
        held = _HELD.get()
        return held if held is not None and held.joined_by(self) else None

    @asynccontextmanager
    async def hold(self, opener: Opener) -> AsyncIterator[HeldTransaction]:
        """One write transaction for everything this task writes until the block ends.

        The first ``begin()`` block of this task (or ``HeldTransaction.connection()``) opens it
        and runs ``opener`` as its first statements; each later ``begin()`` block joins it (in a
        SAVEPOINT, so a failing one rolls back alone); it commits when this block ends, unless
        rolled back first (``HeldTransaction.rollback()``, or an exception). ``after_commit``
        callbacks and the wake-up for its events wait for that commit. Tasks this one starts are
        not part of it (and on SQLite their writes wait for it to end: never await one inside).
        """
        held = HeldTransaction(self, opener)
        token = _HELD.set(held)
        try:
            yield held
        except BaseException as exc:
            await held.rollback(exc)
            raise
        finally:
            _HELD.reset(token)
        await held.commit()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once this task's writes are committed: now, or when ``hold()``'s
        transaction commits (never, if it rolls back)."""
        held = self._held()
        if held is None:
            callback()
        else:
            held.defer(callback)

    async def commit_rows(self, joint: JointRows) -> None:
        """Insert ``joint``'s rows as one write transaction of their own; returns once committed.

        On PostgreSQL that transaction is a single statement in autocommit: atomic on its own, so
        it needs neither BEGIN nor COMMIT, and one round trip instead of four; concurrent callers'
        statements share one round trip and one commit (``connector._JointGroupCommit``). On
        SQLite the rows queued together run back to back in the group commit's next batch
        (``connector._GroupCommit.commit_joint``). Inside ``hold()`` the rows join the held
        transaction.
        """
        if self._held() is not None:
            async with self.begin() as conn:
                await conn.insert_joint(joint)
            return
        woken = await self.connector.commit_joint(joint)
        if joint.insert.has_event and not woken:
            self.events_committed()

    def read(self) -> AbstractAsyncContextManager[Connection]:
        return self.connector.read()

    async def prepare(self, statements: Sequence[Statement], *, connections: int) -> None:
        """Ready ``connections`` connections for ``statements`` before the work that runs them
        (on PostgreSQL: opened, and the statements parsed on each; ``connector.prepare``)."""
        await self.connector.prepare(statements, connections=connections)

    async def ready(
        self, statements: Sequence[Statement], *, of: str, connections: int = READY_CONNECTIONS
    ) -> None:
        """``prepare`` at start-up, which only saves time: a failure is one warning naming
        ``of`` (whose statements they are), and the work starts anyway, its first runs opening
        and parsing what this did not. An outage is reported where the work meets it."""
        try:
            await self.prepare(statements, connections=connections)
        except Exception as exc:
            log.warning(
                "readying connections for %s failed (%s: %s); the first runs open and parse them",
                of,
                type(exc).__name__,
                exc,
            )

    async def listen(self, channel: str, callback: Callable[[str], None]) -> asyncio.Event | None:
        """Call ``callback`` with each NOTIFY's payload on ``channel``, on a connection of its
        own, until the returned event is set (the connection was lost: ``unlisten`` it). None
        where the backend has no NOTIFY (SQLite: its workers' wake-ups are datagrams)."""
        return await self.connector.listen(channel, callback)

    async def unlisten(self, lost: asyncio.Event) -> None:
        await self.connector.unlisten(lost)

    async def ping(self) -> None:
        async with self.read() as conn:
            await conn.execute(_PING)

    async def dispose(self) -> None:
        await self.connector.close()


Opener = Callable[[Connection], Awaitable[None]]
_HELD: ContextVar[HeldTransaction | None] = ContextVar("hookline_held_transaction", default=None)


class Preempted(Exception):
    """Raised by a ``hold()`` opener that finds the work already done or taken by another.

    The opener wrote nothing, so its transaction ends as a successful one does: on SQLite, once
    the batch whose rows it read is durable. Then the exception reaches the ``begin()`` caller.
    """


class _RolledBack(Exception):
    """Thrown into a transaction's context manager to make it roll back."""


class HeldTransaction:
    """The transaction of ``Database.hold()``: opened lazily, committed by its holder."""

    def __init__(self, db: Database, opener: Opener) -> None:
        self._db = db
        self._opener = opener
        self._task = asyncio.current_task()
        self._stack: AsyncExitStack | None = None
        self._conn: Connection | None = None
        self._after_commit: list[Callable[[], None]] = []

    @property
    def is_open(self) -> bool:
        return self._conn is not None

    def joined_by(self, db: Database) -> bool:
        # Tasks started inside hold() inherit the context variable; only its own task joins.
        return db is self._db and asyncio.current_task() is self._task

    async def connection(self) -> Connection:
        """The open transaction; opens it (running the opener first) if none is open."""
        if self._conn is not None:
            return self._conn
        stack = AsyncExitStack()
        conn = await stack.enter_async_context(self._db.connector.transaction())
        conn.wakes_workers = False
        try:
            await self._opener(conn)
        except Preempted:
            await stack.aclose()
            raise
        except BaseException as exc:
            await _throw_into(stack, exc)
            raise
        self._stack, self._conn = stack, conn
        return conn

    @asynccontextmanager
    async def block(self) -> AsyncIterator[Connection]:
        """A ``begin()`` block inside the held transaction."""
        if self._conn is not None:
            async with self._conn.begin_nested():
                yield self._conn
            return
        conn = await self.connection()
        try:
            yield conn
        except BaseException as exc:
            # The block that opened the transaction failed: nothing else is in it yet.
            await self.rollback(exc)
            raise

    def defer(self, callback: Callable[[], None]) -> None:
        self._after_commit.append(callback)

    async def rollback(self, exc: BaseException | None = None) -> None:
        """Roll back whatever is open; a later ``begin()`` opens a new transaction."""
        stack, self._stack, self._conn = self._stack, None, None
        self._after_commit.clear()
        if stack is not None:
            await _throw_into(stack, exc or _RolledBack())

    async def commit(self) -> None:
        # Read before the COMMIT: on SQLite the units queued behind this one share its connection.
        recorded = self._conn is not None and self._conn.wakes_workers
        stack, self._stack, self._conn = self._stack, None, None
        if stack is not None:
            await stack.aclose()
        callbacks, self._after_commit = self._after_commit, []
        if recorded:
            self._db.events_committed()
        for callback in callbacks:
            callback()


async def _throw_into(stack: AsyncExitStack, exc: BaseException) -> None:
    """Exit ``stack`` as if ``exc`` had been raised inside it: its transaction rolls back."""
    await stack.__aexit__(type(exc), exc, exc.__traceback__)


async def fetch_one(source: Database | Connection, statement: Statement, params: Params) -> Any:
    """The first row or None: in ``source``'s transaction, or, given the ``Database``, as a
    one-statement read of its own."""
    if isinstance(source, Database):
        return await source.fetch_one(statement, params)
    return (await source.execute(statement, params)).first()


async def fetch_all(
    source: Database | Connection, statement: Statement, params: Params
) -> list[Any]:
    """Every row: in ``source``'s transaction, or, given the ``Database``, as one statement
    that is a transaction of its own (``Database.fetch_all``: PostgreSQL only)."""
    if isinstance(source, Database):
        return await source.fetch_all(statement, params)
    return (await source.execute(statement, params)).all()
