"""Engines and transactions.

``Database.begin()`` opens a write transaction and ``Database.read()`` a read-only one; the caller
decides where a transaction starts and ends, and the domain functions it calls never commit.

On SQLite every write goes through one connection with ``BEGIN IMMEDIATE``: SQLite has a single
writer anyway, and taking the write lock up front turns "database is locked" errors in the middle
of a transaction into an orderly queue at the pool. Reads use their own pool and never wait for
writers (WAL).

Two things keep the SQLite write path fast (see docs/benchmarks.md for the profiles and gains):

* Statements run inline on the event loop (``_InlineConnection``), not on aiosqlite's thread: a
  primary-key read or an INSERT takes tens of microseconds, less than handing it to a thread and
  back, and far less on a busy core where every hand-off waits for the scheduler (and the GIL).
  Only what can wait goes to a thread: ``COMMIT`` (fsync), and ``BEGIN IMMEDIATE`` when another
  process holds the write lock (tried inline first, without waiting). Writers of other
  processes take turns at ``storage.turnstile`` first, which hands the lock over at once.
* Group commit (``_GroupCommit``): the units of work of concurrent ``begin()`` callers run one
  after another inside one physical transaction, each in its own SAVEPOINT (a failing unit rolls
  back alone; the SAVEPOINTs go straight to ``sqlite3``), and one COMMIT (one fsync) covers them
  all. ``begin()`` returns only after the COMMIT that contains its work, so an acknowledged write
  is as durable as before.

A request with an ``Idempotency-Key`` needs its reservation, its handler's writes and its stored
response in one transaction. ``Database.hold()`` gives it one (``HeldTransaction``) that every
``begin()`` block of the request's task joins, and that its owner commits once the response is
known (see ``limits.idempotency``). The SQLite database file is created mode 0600 (SQLite gives its
``-wal`` and ``-shm`` files the database file's mode).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from contextvars import ContextVar
from typing import Any

import asyncpg
import orjson
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from hookline.settings import Settings
from hookline.storage.direct import (
    DirectStatement,
    JointRows,
    insert_joint,
    sqlite3_connection_of,
)
from hookline.storage.turnstile import TurnstilePlace, place_for

_BUSY_TIMEOUT_MS = 10_000
# A PostgreSQL that does not answer (a dropped network, a hung server) fails a connection attempt
# after this long, so a request gets its 503 (storage.outage) in seconds, not asyncpg's default 60.
PG_CONNECT_TIMEOUT_SECONDS = 5.0
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    # FULL: an acknowledged write survives power loss too, not just a process crash.
    "PRAGMA synchronous=FULL",
    f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys=ON",
)


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


# JSON columns (tags, event payloads, metadata) through orjson rather than the json module, as the
# API's responses already are: stdlib's encoder was 3-5% of a POST /v1/contacts, its decoder as
# much of a GET. Whatever orjson cannot encode could not be returned by the API either.
JSON_CODEC: dict[str, Any] = {"json_serializer": _json_text, "json_deserializer": orjson.loads}


def async_url(database_url: str) -> str:
    """``sqlite:///x`` / ``postgresql://...`` as the async driver URL SQLAlchemy needs."""
    url = make_url(database_url)
    if url.drivername in ("sqlite", "sqlite+pysqlite"):
        return str(url.set(drivername="sqlite+aiosqlite"))
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg2", "postgresql+psycopg"):
        return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    return url.render_as_string(hide_password=False)


# BEGIN IMMEDIATE waits only while another *process* holds the write lock (this process's
# writers queue in ``_GroupCommit``): try it inline without waiting, and only if the lock is taken
# wait for it on a thread. COMMIT waits for fsync, so it always leaves the event loop.
_LOCKING_BEGIN = "BEGIN IMMEDIATE"


class _InlineCursor:
    """An aiosqlite-shaped cursor whose calls run sqlite3 inline (see the module doc)."""

    __slots__ = ("_cursor", "_turnstile")

    def __init__(self, cursor: sqlite3.Cursor, turnstile: TurnstilePlace | None = None) -> None:
        self._cursor = cursor
        self._turnstile = turnstile

    async def __aenter__(self) -> _InlineCursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self._cursor.close()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    async def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _InlineCursor:
        if sql == _LOCKING_BEGIN:
            await self._begin_immediate()
        elif sql == "COMMIT":
            await asyncio.to_thread(self._cursor.execute, sql, parameters)
            self._release_turnstile()
        else:
            self._cursor.execute(sql, parameters)
        return self

    async def _begin_immediate(self) -> None:
        # Other processes' writers first: storage/turnstile.py (held until COMMIT or ROLLBACK).
        if self._turnstile is not None:
            await self._turnstile.acquire()
        try:
            await self._take_write_lock()
        except BaseException:
            self._release_turnstile()
            raise

    async def _take_write_lock(self) -> None:
        connection = self._cursor.connection
        connection.execute("PRAGMA busy_timeout=0")
        try:
            self._cursor.execute(_LOCKING_BEGIN)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        finally:
            connection.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
        await asyncio.to_thread(self._cursor.execute, _LOCKING_BEGIN)

    def _release_turnstile(self) -> None:
        if self._turnstile is not None and not self._cursor.connection.in_transaction:
            self._turnstile.release()

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> _InlineCursor:
        self._cursor.executemany(sql, rows)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._rows()

    async def _rows(self) -> AsyncIterator[Any]:
        while rows := self._cursor.fetchmany(self._cursor.arraysize or 100):
            for row in rows:
                yield row


class _InlineQueue:
    """Stands in for aiosqlite's request queue, which SQLAlchemy's isolation_level setter uses."""

    def put_nowait(self, item: tuple[asyncio.Future[Any], Any]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as exc:
            future.set_exception(exc)


class _InlineConnection:
    """The aiosqlite ``Connection`` surface SQLAlchemy's aiosqlite dialect uses, run inline."""

    def __init__(self, path: str) -> None:
        # check_same_thread=False: BEGIN/COMMIT run on a helper thread, never concurrently.
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._connection = self._conn  # SQLAlchemy checks it to tell an open connection
        self._tx = _InlineQueue()
        self._turnstile = place_for(path)

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    @property
    def sqlite3_connection(self) -> sqlite3.Connection:
        """For ``storage.direct``: statements that skip SQLAlchemy in this transaction."""
        return self._conn

    def cursor(self) -> _InlineCursor:
        return _InlineCursor(self._conn.cursor(), self._turnstile)

    async def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _InlineCursor:
        return await self.cursor().execute(sql, parameters)

    async def commit(self) -> None:
        if self._conn.in_transaction:
            await asyncio.to_thread(self._conn.commit)
        self._release_turnstile()

    async def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.rollback()
        self._release_turnstile()

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)

    async def close(self) -> None:
        self._conn.close()
        self._release_turnstile()

    def stop(self) -> None:
        self._conn.close()
        self._release_turnstile()

    def _release_turnstile(self) -> None:
        if self._turnstile is not None:
            self._turnstile.release()


def _sqlite_engine(url: str, *, pool_size: int, immediate: bool) -> AsyncEngine:
    path = make_url(url).database or ":memory:"

    async def connect() -> _InlineConnection:
        return _InlineConnection(path)

    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=60,
        pool_pre_ping=False,
        async_creator=connect,
        **JSON_CODEC,
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin (see module doc).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    if immediate:

        @event.listens_for(engine.sync_engine, "begin")
        def _on_begin(connection: Any) -> None:
            connection.exec_driver_sql(_LOCKING_BEGIN)

    # Readers send no BEGIN: each SELECT is then its own snapshot (autocommit mode), which is
    # all a one-statement read needs, and saves a BEGIN + ROLLBACK (~100 us) per read.

    return engine


def _create_private_file(path: str) -> None:
    """Create the SQLite database file mode 0600 if it does not exist yet.

    SQLite would create it 0644 (less the umask), readable by every local user, and it gives the
    ``-wal`` and ``-shm`` files it creates later the database file's own mode. An existing file
    keeps the mode its operator chose.
    """
    if path in ("", ":memory:") or path.startswith("file:"):
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except (FileExistsError, FileNotFoundError):
        # Exists already; or its directory doesn't, which SQLite reports when it connects.
        return


class Database:
    """The process's engines; created once at start-up and shared by every request."""

    def __init__(self, settings: Settings) -> None:
        self.url = async_url(settings.database_url)
        self.is_sqlite = not settings.is_postgres
        if self.is_sqlite:
            _create_private_file(make_url(self.url).database or "")
            self.writer = _sqlite_engine(self.url, pool_size=1, immediate=True)
            self.reader = _sqlite_engine(self.url, pool_size=4, immediate=False)
            self._group: _GroupCommit | None = _GroupCommit(self.writer)
        else:
            self.writer = create_async_engine(
                self.url,
                pool_size=settings.db_pool_size,
                max_overflow=settings.db_pool_size,
                connect_args={"timeout": PG_CONNECT_TIMEOUT_SECONDS},
                **JSON_CODEC,
            )
            self.reader = self.writer
            self._group = None
        self._dsn = settings.database_url
        self._pool_size = settings.db_pool_size
        self._point_reader: sqlite3.Connection | None = None
        self._pg_pool: asyncpg.Pool | None = None
        self._pg_pool_lock = asyncio.Lock()

    async def fetch_one(self, statement: DirectStatement, params: Mapping[str, Any]) -> Any | None:
        """One row of a one-statement read, through the driver (see ``storage.direct``)."""
        compiled = statement.compiled(self.writer.dialect)
        sql, arguments = compiled.render(params)
        if self.is_sqlite:
            row = self._sqlite_point_reader().execute(sql, arguments).fetchone()
        else:
            row = await (await self._pool()).fetchrow(sql, *arguments)
        return None if row is None else compiled.decode(row)

    async def fetch_all(self, statement: DirectStatement, params: Mapping[str, Any]) -> list[Any]:
        """Every row of one statement that is a transaction of its own: on PostgreSQL's asyncpg
        pool, in autocommit, so one round trip with no BEGIN or COMMIT. PostgreSQL only: on
        SQLite a write must go through the single writer (``begin()``)."""
        if self.is_sqlite:
            raise RuntimeError("Database.fetch_all is for PostgreSQL; use begin() on SQLite")
        compiled = statement.compiled(self.writer.dialect)
        sql, arguments = compiled.render(params)
        rows = await (await self._pool()).fetch(sql, *arguments)
        return [compiled.decode(row) for row in rows]

    def _sqlite_point_reader(self) -> sqlite3.Connection:
        # One connection serves every point read: each runs inline, start to finish, without
        # yielding to the event loop, so no two ever overlap on it. Autocommit mode: each SELECT
        # is its own snapshot and never holds a read lock between requests.
        if self._point_reader is None:
            path = make_url(self.url).database or ":memory:"
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            for pragma in SQLITE_PRAGMAS:
                conn.execute(pragma)
            self._point_reader = conn
        return self._point_reader

    async def _pool(self) -> asyncpg.Pool:
        """The PostgreSQL pool for one-statement work, opened on first use."""
        return self._pg_pool or await self._open_pg_pool()

    async def _open_pg_pool(self) -> asyncpg.Pool:
        async with self._pg_pool_lock:
            if self._pg_pool is None:
                dsn = make_url(self._dsn).set(drivername="postgresql")
                self._pg_pool = await asyncpg.create_pool(
                    dsn.render_as_string(hide_password=False),
                    min_size=1,
                    max_size=self._pool_size,
                    init=_decode_json_as_sqlalchemy_does,
                    reset=_keep_session_state,
                    timeout=PG_CONNECT_TIMEOUT_SECONDS,
                )
            return self._pg_pool

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction: commits when the block ends, rolls back on an exception.

        Returns only once the work is committed. On SQLite the work may share its transaction
        with other callers' (group commit, see ``_GroupCommit``); it still commits or rolls back
        as one unit, and never sees another unit's uncommitted failure.

        Inside ``hold()``, in the task that holds it, the block joins the held transaction
        instead, and its work commits when the holder commits.
        """
        held = self._held()
        if held is not None:
            async with held.block() as conn:
                yield conn
            return
        async with self._transaction() as conn:
            yield conn

    def _transaction(self) -> AbstractAsyncContextManager[AsyncConnection]:
        return self._group.unit() if self._group is not None else self.writer.begin()

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
        callbacks wait for that commit. Tasks this one starts are not part of it (and on SQLite
        their writes wait for it to end: never await one inside).
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

        On PostgreSQL that transaction is a single statement on the asyncpg pool: atomic on its
        own, so it needs neither BEGIN nor COMMIT, and one round trip instead of four (see
        ``storage.direct``). On SQLite it is a ``begin()`` unit like any other, and so it is
        inside ``hold()``, where the rows join the held transaction.
        """
        if self.is_sqlite or self._held() is not None:
            async with self.begin() as conn:
                await insert_joint(conn, joint)
            return
        compiled = joint.insert.combined.compiled(self.writer.dialect)
        await (await self._pool()).execute(
            compiled.sql, *compiled.arguments(joint.combined_params())
        )

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self.reader.connect() as conn:
            yield conn

    async def ping(self) -> None:
        from sqlalchemy import text

        async with self.read() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if self._point_reader is not None:
            self._point_reader.close()
            self._point_reader = None
        if self._pg_pool is not None:
            await self._pg_pool.close()
            self._pg_pool = None
        await self.writer.dispose()
        if self.reader is not self.writer:
            await self.reader.dispose()


Opener = Callable[[AsyncConnection], Awaitable[None]]
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
        self._conn: AsyncConnection | None = None
        self._after_commit: list[Callable[[], None]] = []

    def joined_by(self, db: Database) -> bool:
        # Tasks started inside hold() inherit the context variable; only its own task joins.
        return db is self._db and asyncio.current_task() is self._task

    async def connection(self) -> AsyncConnection:
        """The open transaction; opens it (running the opener first) if none is open."""
        if self._conn is not None:
            return self._conn
        stack = AsyncExitStack()
        conn = await stack.enter_async_context(self._db._transaction())
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
    async def block(self) -> AsyncIterator[AsyncConnection]:
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
        stack, self._stack, self._conn = self._stack, None, None
        if stack is not None:
            await stack.aclose()
        callbacks, self._after_commit = self._after_commit, []
        for callback in callbacks:
            callback()


async def _throw_into(stack: AsyncExitStack, exc: BaseException) -> None:
    """Exit ``stack`` as if ``exc`` had been raised inside it: its transaction rolls back."""
    await stack.__aexit__(type(exc), exc, exc.__traceback__)


async def _decode_json_as_sqlalchemy_does(conn: asyncpg.Connection) -> None:
    # SQLAlchemy's asyncpg dialect decodes json/jsonb in a type codec and its JSON types have no
    # result processor, so ``storage.direct`` rows need the same codecs on this pool.
    for type_name in ("json", "jsonb"):
        await conn.set_type_codec(
            type_name, schema="pg_catalog", encoder=_as_is, decoder=orjson.loads, format="text"
        )


def _as_is(value: str) -> str:
    return value


async def _keep_session_state(_conn: asyncpg.Connection) -> None:
    # asyncpg's default reset sends "SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *;
    # RESET ALL" on every release: a second round trip for each one-statement read. This pool
    # only ever runs single statements that change no session state (no SET, LISTEN, cursors or
    # advisory locks), so there is nothing to undo; asyncpg still rolls back an open transaction.
    return None


class _Batch:
    """One physical transaction shared by several units of work."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.units = 0
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._driver: sqlite3.Connection = sqlite3_connection_of(conn)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """One unit's SAVEPOINT, sent straight to ``sqlite3``.

        SQLAlchemy's ``begin_nested()`` did the same with three greenlet hand-offs and a
        transaction object per unit, about 6% of a POST /v1/contacts; SQLAlchemy needs no
        knowledge of it, since the outer transaction is what it commits.
        """
        self._driver.execute("SAVEPOINT unit")
        try:
            yield
        except BaseException:
            self._driver.execute("ROLLBACK TO unit")
            self._driver.execute("RELEASE unit")
            raise
        self._driver.execute("RELEASE unit")

    async def commit(self) -> None:
        try:
            await self.conn.commit()
            self.done.set_result(None)
        except BaseException as exc:
            self.done.set_exception(exc)
            # Its waiters raise it; retrieve it here so asyncio doesn't warn when none wait.
            self.done.exception()
            raise
        finally:
            await self.conn.close()


class _GroupCommit:
    """Group commit for SQLite's single writer.

    Callers queue on a lock; the first opens ``BEGIN IMMEDIATE``, each runs its unit in a
    SAVEPOINT, and the unit that finds nobody else queued (or the ``MAX_UNITS``-th) commits for
    all. While that COMMIT waits for fsync on a helper thread, new callers queue up and become the
    next batch, so the number of fsyncs per second stays flat as the request rate grows.
    """

    MAX_UNITS = 256

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._lock = asyncio.Lock()
        self._queued = 0
        self._batch: _Batch | None = None

    async def _open(self) -> _Batch:
        conn = await self._engine.connect()
        try:
            await conn.begin()
        except BaseException:
            await conn.close()
            raise
        self._batch = _Batch(conn)
        return self._batch

    @asynccontextmanager
    async def unit(self) -> AsyncIterator[AsyncConnection]:
        self._queued += 1
        try:
            await self._lock.acquire()
        finally:
            self._queued -= 1
        try:
            batch = self._batch or await self._open()
            try:
                with batch.savepoint():
                    yield batch.conn
            finally:
                batch.units += 1
                if self._queued == 0 or batch.units >= self.MAX_UNITS:
                    self._batch = None
                    await batch.commit()
        finally:
            self._lock.release()
        # shield: a cancelled caller (client gone) must not cancel the batch's shared future.
        await asyncio.shield(batch.done)
