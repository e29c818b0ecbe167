"""The connectors: one per backend, the only code that holds a driver connection.

A connector owns its connections and transactions and runs every statement of hookline the
same way: ``Connection.execute(statement, params)`` compiles it once per dialect
(``storage.statements``) and hands SQL and arguments to the driver. SQLAlchemy never opens a
connection here; it is the schema and the statement builder.

* ``SQLiteConnector``: ``sqlite3`` run inline on the event loop. A primary-key read or an INSERT
  takes tens of microseconds, less than handing it to a thread and back, and far less on a busy
  core where every hand-off waits for the scheduler. Only what can wait leaves the loop: COMMIT
  (fsync), and BEGIN IMMEDIATE when another *process* holds the write lock (tried inline first,
  without waiting); writers of other processes (``serve --workers N``) first take turns at
  ``storage.turnstile``, which hands the lock over the moment its holder lets go. Every write
  goes through one connection with group commit (``_GroupCommit``); reads share one
  connection in autocommit mode, so each SELECT is its own snapshot and never waits for the
  writer (WAL). A read yields to the loop once before it starts (fairness under load:
  ``_let_others_run``), then runs start to finish without yielding, so no two ever overlap
  on that connection. The key look-ups (``SharedLookup``) asked in one turn are read together
  in the next, one statement for all (``SQLiteConnector._read_asked``).
* ``PostgresConnector``: one pool of asyncpg connections (``storage.pgpool``: first come, first
  served, no reset query on release; a connection left inside a transaction, interrupted or
  broken is terminated). A transaction is
  asyncpg's own (``Connection.transaction()``); a read, or a one-statement write, runs in
  autocommit, one round trip. ``commit_rows`` has a group commit (``_JointGroupCommit``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

import asyncpg
import orjson
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.engine import Dialect

from hookline.storage.pgpool import ConnectionBroken, FairPool
from hookline.storage.statements import (
    JointRows,
    Params,
    Result,
    SharedLookup,
    Statement,
    compiled_for,
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
    # Deleted rows are overwritten with zeros, not left in free pages: an erased contact's
    # data must not stay readable in the file (docs/operations.md, Erasure).
    "PRAGMA secure_delete=ON",
)


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


# JSON columns (tags, event payloads, metadata) through orjson rather than the json module, as the
# API's responses already are (the faster codec). Whatever orjson cannot encode could not be
# returned by the API either.
JSON_CODEC: dict[str, Any] = {"json_serializer": _json_text, "json_deserializer": orjson.loads}
SQLITE_DIALECT: Dialect = SQLiteDialect_pysqlite(**JSON_CODEC)
POSTGRES_DIALECT: Dialect = PGDialect_asyncpg(**JSON_CODEC)  # type: ignore[no-untyped-call]

Rows = Sequence[Mapping[str, Any]]
_Item = TypeVar("_Item")

# What the drivers raise about the database (not about hookline's code), for callers that turn
# them into a message (the CLI).
DRIVER_ERRORS: tuple[type[Exception], ...] = (
    sqlite3.Error,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
)


class IntegrityError(Exception):
    """A constraint refused a write (unique key, foreign key, check), on either backend; the
    driver's own error is its ``__cause__``."""


_SQLITE_INTEGRITY = sqlite3.IntegrityError
_POSTGRES_INTEGRITY = asyncpg.IntegrityConstraintViolationError


class Connection:
    """A connection inside a transaction (or, for a read, in autocommit): what the domain and
    the delivery engine are given. They run statements on it and never commit."""

    dialect: Dialect
    wakes_workers = False
    """Set when the transaction queues work for the delivery workers (an event recorded by
    ``storage.outbox``, a delivery made due): its commit wakes them (``storage.db.Database``)."""

    async def execute(self, statement: Statement, params: Params | Rows | None = None) -> Result:
        """Run one statement; a list of parameter sets runs it once per set."""
        if isinstance(params, Sequence):
            await self.execute_many(statement, params)
            return Result([], -1)
        return await self._execute(statement, params or {})

    async def scalar(self, statement: Statement, params: Params | None = None) -> Any:
        """The first column of the first row, or None."""
        return (await self._execute(statement, params or {})).scalar()

    async def scalars(self, statement: Statement, params: Params | None = None) -> Result:
        """The first column of every row."""
        return (await self._execute(statement, params or {})).scalars()

    async def _execute(self, statement: Statement, params: Params) -> Result:
        raise NotImplementedError

    async def execute_many(self, statement: Statement, rows: Rows) -> None:
        raise NotImplementedError

    def begin_nested(self) -> contextlib.AbstractAsyncContextManager[None]:
        """A SAVEPOINT: an exception in the block rolls back the block's work only."""
        raise NotImplementedError

    async def insert_joint(self, joint: JointRows) -> None:
        """Insert ``joint``'s rows in this transaction."""
        raise NotImplementedError


class SQLiteConnection(Connection):
    __slots__ = ("_raw",)
    dialect = SQLITE_DIALECT
    _savepoints = itertools.count()

    def __init__(self, raw: sqlite3.Connection) -> None:
        self._raw = raw

    async def _execute(self, statement: Statement, params: Params) -> Result:
        return self.run(statement, params)

    def run(self, statement: Statement, params: Params) -> Result:
        """``execute``, without the coroutine: for callers that must not yield."""
        compiled = compiled_for(statement, self.dialect, params)
        sql, arguments = compiled.render(params)
        try:
            cursor = self._raw.execute(sql, arguments)
        except _SQLITE_INTEGRITY as exc:
            raise IntegrityError(str(exc)) from exc
        if cursor.description is None:
            return Result([], cursor.rowcount)
        rows = compiled.rows(cursor.fetchall(), lambda: [d[0] for d in cursor.description])
        return Result(rows, cursor.rowcount if cursor.rowcount >= 0 else len(rows))

    async def execute_many(self, statement: Statement, rows: Rows) -> None:
        if rows:
            compiled = compiled_for(statement, self.dialect, rows[0])
            try:
                self._raw.executemany(compiled.sql, [compiled.arguments(row) for row in rows])
            except _SQLITE_INTEGRITY as exc:
                raise IntegrityError(str(exc)) from exc

    @contextlib.asynccontextmanager
    async def begin_nested(self) -> AsyncIterator[None]:
        with savepoint(self._raw, f"nested_{next(self._savepoints)}"):
            yield

    async def insert_joint(self, joint: JointRows) -> None:
        self.wakes_workers |= joint.insert.has_event
        for part, row in zip(joint.insert.parts, joint.rows, strict=True):
            self.run(part, row)

    def run_together(self, joints: Sequence[Sequence[tuple[str, Sequence[Any]]]]) -> None:
        """Several callers' statements, already rendered: when they all run the same
        statements (a burst of POSTs), each statement once for all of them (``executemany``:
        the first statement's rows, then the second's...), else one caller after another."""
        if len(joints) < 2 or not _same_statements(joints):
            for rendered in joints:
                self.run_rendered(rendered)
            return
        try:
            for at, (sql, _) in enumerate(joints[0]):
                self._raw.executemany(sql, [joint[at][1] for joint in joints])
        except _SQLITE_INTEGRITY as exc:
            raise IntegrityError(str(exc)) from exc

    def run_rendered(self, rendered: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Statements already rendered (``rendered_joint``), which return no rows."""
        try:
            for sql, arguments in rendered:
                self._raw.execute(sql, arguments)
        except _SQLITE_INTEGRITY as exc:
            raise IntegrityError(str(exc)) from exc


def _same_statements(joints: Sequence[Sequence[tuple[str, Sequence[Any]]]]) -> bool:
    first = joints[0]
    for joint in joints:
        if len(joint) != len(first):
            return False
        for (sql, _), (first_sql, _) in zip(joint, first, strict=True):
            if sql is not first_sql and sql != first_sql:
                return False
    return True


def rendered_joint(joint: JointRows) -> list[tuple[str, Sequence[Any]]]:
    """The SQL and arguments of ``joint``'s statements on SQLite, rendered (bind processors
    and all) before the writer is taken, so that holding it costs only their execution."""
    return [
        compiled_for(part, SQLITE_DIALECT, row).render(row)
        for part, row in zip(joint.insert.parts, joint.rows, strict=True)
    ]


@contextlib.contextmanager
def savepoint(raw: sqlite3.Connection, name: str) -> Iterator[None]:
    raw.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        raw.execute(f"ROLLBACK TO {name}")
        raw.execute(f"RELEASE {name}")
        raise
    raw.execute(f"RELEASE {name}")


class PostgresConnection(Connection):
    __slots__ = ("_raw",)
    dialect = POSTGRES_DIALECT

    def __init__(self, raw: asyncpg.Connection) -> None:
        self._raw = raw

    async def _execute(self, statement: Statement, params: Params) -> Result:
        compiled = compiled_for(statement, self.dialect, params)
        sql, arguments = compiled.render(params)
        try:
            if not compiled.returns_rows:
                return Result([], _rowcount(await self._raw.execute(sql, *arguments)))
            records = await self._raw.fetch(sql, *arguments)
        except _POSTGRES_INTEGRITY as exc:
            raise IntegrityError(str(exc)) from exc
        rows = compiled.rows(records, lambda: list(records[0].keys()) if records else [])
        return Result(rows, len(rows))

    async def execute_many(self, statement: Statement, rows: Rows) -> None:
        if rows:
            compiled = compiled_for(statement, self.dialect, rows[0])
            arguments = [compiled.arguments(row) for row in rows]
            try:
                await self._raw.executemany(compiled.sql, arguments)
            except _POSTGRES_INTEGRITY as exc:
                raise IntegrityError(str(exc)) from exc

    @contextlib.asynccontextmanager
    async def begin_nested(self) -> AsyncIterator[None]:
        async with self._raw.transaction():  # nested in the open one: a SAVEPOINT
            yield

    async def insert_joint(self, joint: JointRows) -> None:
        self.wakes_workers |= joint.insert.has_event
        await _insert_joints(self._raw, [joint])


async def _insert_joints(raw: asyncpg.Connection, joints: Sequence[JointRows]) -> None:
    """The rows of ``joints`` (all of one ``JointInsert``), each its one statement, in one round
    trip: for several, an ``executemany`` (one implicit transaction unless one is open)."""
    sql = joints[0].insert.combined.compiled(POSTGRES_DIALECT).sql
    arguments = [joint.combined_arguments(POSTGRES_DIALECT) for joint in joints]
    try:
        if len(arguments) == 1:
            await raw.execute(sql, *arguments[0])
        else:
            await raw.executemany(sql, arguments)
    except _POSTGRES_INTEGRITY as exc:
        raise IntegrityError(str(exc)) from exc


def _rowcount(status: str) -> int:
    # PostgreSQL's command tag: "UPDATE 3", "DELETE 0", "INSERT 0 1".
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else 0


class Connector:
    """What ``storage.db.Database`` needs of a backend."""

    dialect: Dialect

    def transaction(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        """A write transaction: commits when the block ends, rolls back on an exception;
        returns only once the work is committed."""
        raise NotImplementedError

    def read(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        """A connection for reads, each statement its own snapshot."""
        raise NotImplementedError

    async def fetch_one(self, statement: Statement, params: Params) -> Any | None:
        async with self.read() as conn:
            return (await conn.execute(statement, params)).first()

    async def commit_joint(self, joint: JointRows) -> bool:
        """Commit ``joint``'s rows as a write of their own, with other callers' (group
        commit); returns once they are committed, or raises what refused them. True if the
        delivery workers were woken for them before their COMMIT (SQLite: ``EarlyWake``), so
        the caller wakes nobody after it."""
        raise NotImplementedError

    async def prepare(self, statements: Sequence[Statement], *, connections: int) -> None:
        """Ready ``connections`` connections for ``statements`` before they are needed (see
        ``PostgresConnector.prepare``); nothing to do on SQLite, whose two connections are
        opened once and whose statements are compiled in process."""

    async def listen(self, channel: str, callback: Callable[[str], None]) -> asyncio.Event | None:
        """LISTEN for other processes' NOTIFY on ``channel`` (``callback`` gets each payload);
        an event set when that connection is lost (``unlisten`` it). None where the backend
        has no NOTIFY (SQLite: the workers' wake-ups are datagrams)."""
        return None

    async def unlisten(self, lost: asyncio.Event) -> None:
        """Close the LISTEN connection that ``lost`` stands for."""

    async def close(self) -> None:
        raise NotImplementedError


EarlyWake = Callable[[], bool]
"""SQLite: called when a group-commit batch holds rows of an event (``commit_joint``) that it
has not committed yet. It wakes the delivery workers now and returns True if that woke this
process's scheduler from its sleep (``storage.db.Database``); else it wakes nobody and returns
False, and the callers wake the workers after the COMMIT as usual."""


class SQLiteConnector(Connector):
    dialect = SQLITE_DIALECT

    def __init__(self, path: str, *, early_wake: EarlyWake | None = None) -> None:
        self.path = path
        _create_private_file(path)
        self._reader: SQLiteConnection | None = None
        self._writer: sqlite3.Connection | None = None
        self._group = _GroupCommit(self._writer_connection, place_for(path), early_wake)
        self._asked: _Queued[tuple[SharedLookup, Any]] = []

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: this code, not the driver, decides when transactions begin.
        # check_same_thread=False: BEGIN/COMMIT run on a helper thread, never concurrently.
        raw = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        for pragma in SQLITE_PRAGMAS:
            raw.execute(pragma)
        return raw

    def _writer_connection(self) -> sqlite3.Connection:
        if self._writer is None:
            self._writer = self._connect()
        return self._writer

    def reader(self) -> SQLiteConnection:
        if self._reader is None:
            self._reader = SQLiteConnection(self._connect())
        return self._reader

    def transaction(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        return self._group.unit()

    async def commit_joint(self, joint: JointRows) -> bool:
        return await self._group.commit_joint(joint)

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Connection]:
        await _let_others_run()
        yield self.reader()

    async def fetch_one(self, statement: Statement, params: Params) -> Any | None:
        if isinstance(statement, SharedLookup):
            # With the other look-ups asked in this turn of the loop, read in the next turn
            # (``_read_asked``): the turn a read waited for anyway (``_let_others_run``).
            loop = asyncio.get_running_loop()
            done: asyncio.Future[Any] = loop.create_future()
            self._asked.append(((statement, params[statement.key]), done))
            if len(self._asked) == 1:
                loop.call_soon(self._read_asked)
            return await done
        await _let_others_run()
        return self.reader().run(statement, params).first()

    def _read_asked(self) -> None:
        """Read the keys of the ``SharedLookup``s asked in the last turn of the loop, inline,
        one statement per lookup (``many``; for one key the lookup itself), and settle each
        caller's future. Every request's API key is looked up so: one statement, one read lock on
        the WAL and one reload of the pages the last COMMIT dropped, for all of them. Each
        caller's key is read after it asked, so it sees what was committed
        before; a read that fails fails that lookup's callers only."""
        asked, self._asked = self._asked, []
        for group in _grouped(asked, _lookup_of):
            lookup = group[0][0][0]
            keys = _keys_of(group)
            try:
                if len(keys) == 1:
                    row = self.reader().run(lookup, {lookup.key: keys[0]}).first()
                    found = {} if row is None else {keys[0]: row}
                else:
                    found = _by_key(lookup, self.reader().run(lookup.many, {lookup.key: keys}))
            except Exception as exc:
                _settle_lookups(group, exc, {})
                continue
            _settle_lookups(group, None, found)

    async def close(self) -> None:
        if self._asked:  # answered now, not by a reader its callback would open again
            self._read_asked()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader._raw.close()
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


async def _let_others_run() -> None:
    """Yield to the event loop once before an inline read.

    Without it a read-only request (a GET: the key, then the rows) runs from its first line to
    its response in one step of its task, never suspending, and under load the other requests
    wait behind it: the tail, not the work. The read itself stays inline: a thread hand-off
    costs more. A ``SharedLookup`` (the API key) waits the same one turn, and is read in it with the
    other look-ups asked in the turn before (``SQLiteConnector._read_asked``).
    """
    await asyncio.sleep(0)


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


_LOCKING_BEGIN = "BEGIN IMMEDIATE"


async def _begin_immediate(raw: sqlite3.Connection) -> None:
    # BEGIN IMMEDIATE waits only while another *process* holds the write lock (this process's
    # writers queue in ``_GroupCommit``): try it inline without waiting, and only if the lock is
    # taken wait for it on a thread.
    raw.execute("PRAGMA busy_timeout=0")
    try:
        raw.execute(_LOCKING_BEGIN)
        return
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
    finally:
        raw.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    await asyncio.to_thread(raw.execute, _LOCKING_BEGIN)


class _Batch:
    """One physical transaction shared by several units of work."""

    def __init__(self, raw: sqlite3.Connection, turnstile: TurnstilePlace | None) -> None:
        self.raw = raw
        self.conn = SQLiteConnection(raw)
        self.units = 0
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.joined: list[asyncio.Future[bool]] = []
        """``commit_joint`` callers whose rows are in this batch: each told of the COMMIT on
        a future of its own (none shared, so a cancelled caller cancels only its own)."""
        self.woke_workers = False
        """Whether the delivery workers were woken before this COMMIT (``EarlyWake``): what
        each of ``joined`` is told with it."""
        self._turnstile = turnstile

    async def commit(self) -> None:
        try:
            await asyncio.to_thread(self._commit_and_hand_over)  # fsync: off the loop
        except BaseException as exc:
            self._failed(exc)
            raise
        self.done.set_result(None)
        for joined in self.joined:
            if not joined.done():
                joined.set_result(self.woke_workers)

    def _failed(self, exc: BaseException) -> None:
        self.done.set_exception(exc)
        # Its waiters raise it; retrieve it here so asyncio doesn't warn when none wait.
        self.done.exception()
        for joined in self.joined:
            if not joined.done():  # else its caller was cancelled and is gone
                joined.set_exception(exc)

    def abandon_all(self, exc: BaseException) -> None:
        """ROLLBACK (``abandon``) and fail every caller of the batch with ``exc``."""
        try:
            self.abandon()
        finally:
            self._failed(exc)

    def abandon(self) -> None:
        """ROLLBACK, keeping nothing of the batch, and let the next process's writer go."""
        try:
            self.raw.rollback()  # a no-op if SQLite already rolled back (a full disk)
        finally:
            if self._turnstile is not None:
                self._turnstile.release()

    def _commit_and_hand_over(self) -> None:
        """COMMIT (or, if it fails, ROLLBACK), then let the next process's writer go, all on
        the helper thread: handing over from the loop waited until the loop, busy with other
        requests, next looked, and the other processes' writers waited that long too."""
        try:
            self.raw.commit()
        except BaseException:
            if self.raw.in_transaction:
                self.raw.rollback()
            raise
        finally:
            if self._turnstile is not None:
                self._turnstile.release()


_QueuedJoint = tuple[list[tuple[str, Sequence[Any]]], "asyncio.Future[bool]"]


def _write_joints(batch: _Batch, queued: list[_QueuedJoint]) -> None:
    """Every queued caller's rows in ``batch``, which holds other work too; a caller whose rows
    were refused is told now, the others join ``batch.joined`` and are told of its COMMIT.

    All of them in one SAVEPOINT first: a SAVEPOINT and a RELEASE per caller were half the
    statements run while the writer is held. Should a constraint refuse any row (rare: the ids
    are new), back to that SAVEPOINT and again, each caller in a SAVEPOINT of its own
    (``_write_each``), so that only the refused caller fails.
    """
    try:
        with savepoint(batch.raw, "joints"):
            batch.conn.run_together([rendered for rendered, _ in queued])
    except Exception:
        _write_each(batch, queued)
        return
    batch.joined.extend(placed for _, placed in queued)


def _wrote_alone(batch: _Batch, queued: list[_QueuedJoint]) -> bool:
    """Every queued caller's rows in ``batch``, a transaction that holds nothing else, with no
    SAVEPOINT: True once written (the callers join ``batch.joined``). False if any row was
    refused: the batch is then rolled back whole (``_Batch.abandon``) and nobody is told yet.

    Why no SAVEPOINT: inside one, SQLite journals the original of every page the batch's
    INSERTs change until the RELEASE, and past 64 KiB it spills that journal to a temporary
    file, created, written and unlinked every batch. With no SAVEPOINT open nothing is kept past
    each statement. What the SAVEPOINT was for, undoing the rows on a refusal, is the ROLLBACK here,
    since nothing else is in the transaction.
    """
    try:
        batch.conn.run_together([rendered for rendered, _ in queued])
    except Exception:
        batch.abandon()
        return False
    batch.joined.extend(placed for _, placed in queued)
    return True


def _write_each(batch: _Batch, queued: list[_QueuedJoint]) -> None:
    """Each queued caller's rows in a SAVEPOINT of its own: a caller whose rows are refused is
    told now, alone; the others join ``batch.joined``."""
    for rendered, placed in queued:
        try:
            with savepoint(batch.raw, "unit"):
                batch.conn.run_rendered(rendered)
        except Exception as exc:  # these rows refused: this caller's alone
            if not placed.done():
                placed.set_exception(exc)
        else:
            batch.joined.append(placed)


class _GroupCommit:
    """Group commit for SQLite's single writer.

    Callers queue on a lock; the first opens ``BEGIN IMMEDIATE``, each runs its unit in a
    SAVEPOINT (a failing unit rolls back alone), and the unit that finds nobody else queued (or
    the ``MAX_UNITS``-th) commits for all. While that COMMIT waits for fsync on a helper thread,
    new callers queue up and become the next batch, so the number of fsyncs per second stays flat
    as the request rate grows. A unit returns only after the COMMIT that contains its work, so an
    acknowledged write is as durable as one committed alone.
    """

    MAX_UNITS = 256

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        turnstile: TurnstilePlace | None,
        early_wake: EarlyWake | None = None,
    ) -> None:
        self._connect = connect
        self._turnstile = turnstile
        self._early_wake = early_wake
        self._lock = asyncio.Lock()
        self._queued = 0
        self._batch: _Batch | None = None
        self._joints: list[_QueuedJoint] = []
        self._joints_hold_an_event = False
        self._joint_runners: set[asyncio.Task[None]] = set()

    async def _open(self) -> _Batch:
        raw = self._connect()
        # Other processes' writers first (storage/turnstile.py), held to the end of the COMMIT.
        if self._turnstile is not None:
            await self._turnstile.acquire()
        try:
            await _begin_immediate(raw)
        except BaseException:
            if self._turnstile is not None:
                self._turnstile.release()
            raise
        self._batch = _Batch(raw, self._turnstile)
        return self._batch

    @contextlib.asynccontextmanager
    async def unit(self) -> AsyncIterator[Connection]:
        self._queued += 1
        try:
            await self._lock.acquire()
        finally:
            self._queued -= 1
        try:
            batch = self._batch or await self._open()
            try:
                with savepoint(batch.raw, "unit"):
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

    async def commit_joint(self, joint: JointRows) -> bool:
        """``joint``'s rows as a unit of a batch (``_write_joints``); returns once that batch
        is committed (or raises what refused the rows, or the COMMIT's failure): True if the
        workers were woken before it (``_let_the_round_join``).

        The caller does not run its rows itself: the rows queued meanwhile are run by one task,
        back to back, in one step of the event loop (``_run_queued_joints``). ``unit()`` hands
        the writer from one caller to the next through the loop, one turn each, and every turn
        runs the other requests' work (parsing, auth, responses) with the write lock held; with
        several processes (``serve --workers N``) the others' writers waited for those turns at
        the turnstile, and two processes served little more than one. Here the lock is held for the
        statements and the COMMIT only.
        """
        placed: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._joints.append((rendered_joint(joint), placed))
        self._joints_hold_an_event |= joint.insert.has_event
        if len(self._joints) == 1:  # the first since the last run: start the next run
            self._queued += 1  # a batch open now waits for it rather than commit without it
            runner = asyncio.ensure_future(self._run_queued_joints())
            self._joint_runners.add(runner)
            runner.add_done_callback(self._joint_runners.discard)
        # A cancelled caller cancels ``placed``, its own: its rows, queued, are run all the
        # same, like a unit already running, and nobody else waits on it (where two shields
        # were, one of the batch's shared future).
        return await placed

    async def _run_queued_joints(self) -> None:
        try:
            await self._lock.acquire()
        except BaseException as exc:  # cancelled (the loop is closing): nobody left waiting
            self._fail_queued_joints(exc)
            raise
        finally:
            self._queued -= 1
        try:
            alone = self._batch is None  # a batch of these rows only, opened here
            try:
                batch = self._batch or await self._open()
            except BaseException as exc:
                self._fail_queued_joints(exc)
                return
            # Taken after the open: rows queued while this waited for the writer join this run.
            queued, self._joints = self._joints, []
            with_event, self._joints_hold_an_event = self._joints_hold_an_event, False
            if not alone:
                _write_joints(batch, queued)
            elif not _wrote_alone(batch, queued):  # a row refused, the batch rolled back
                self._batch = None
                try:
                    batch = await self._open()
                except BaseException as exc:
                    self._fail(queued, exc)
                    return
                _write_each(batch, queued)
            batch.units += len(queued)
            if with_event and batch.units < self.MAX_UNITS:
                await self._let_the_round_join(batch)
            if self._queued == 0 or batch.units >= self.MAX_UNITS:
                self._batch = None
                # A failed COMMIT reaches every caller through batch.done.
                with contextlib.suppress(Exception):
                    await batch.commit()
        finally:
            self._lock.release()

    async def _let_the_round_join(self, batch: _Batch) -> None:
        """``batch`` holds rows of an event, not yet committed: if waking the workers now
        finds this process's scheduler asleep (``EarlyWake``), hold the batch open for one turn
        of the loop, in which the woken scheduler's round (``begin()``) queues for the writer;
        the round then runs in this batch, after these rows, and one fsync'd COMMIT holds both.

        Committed apart, an event paid for two COMMITs one after the other, its batch's and
        then its round's. Nothing changes for the guarantees: the round sees the rows in the
        transaction, its claims commit with them and its sends start after that COMMIT
        (``unit()`` returns only then); a round that misses the batch needs the writer, so it
        runs after the COMMIT and sees them too, as does a round of another process (the
        turnstile). The writer is held for that turn only when the scheduler was asleep and
        this wake-up woke it: never for an API without a worker, a scheduler mid-round, a
        second batch of the same turn, or beside other processes' workers
        (``SocketWakeup.scheduler_asleep``), whose writers would wait at the turnstile for as
        long as it is held.
        """
        if self._early_wake is None or batch.woke_workers or not self._early_wake():
            return
        batch.woke_workers = True
        if self._queued:  # the batch stays open for those queued: the round can join them
            return
        try:
            await asyncio.sleep(0)
        except BaseException as exc:  # cancelled (the loop is closing): nothing is kept
            self._batch = None
            batch.abandon_all(exc)
            raise

    def _fail_queued_joints(self, exc: BaseException) -> None:
        queued, self._joints = self._joints, []
        self._fail(queued, exc)

    @staticmethod
    def _fail(queued: list[_QueuedJoint], exc: BaseException) -> None:
        for _, placed in queued:
            if placed.done():  # its caller was cancelled
                continue
            if isinstance(exc, asyncio.CancelledError):
                placed.cancel()
            else:
                placed.set_exception(exc)


class PostgresConnector(Connector):
    dialect = POSTGRES_DIALECT

    def __init__(self, dsn: str, pool_size: int) -> None:
        self.dsn = dsn
        self._pool = FairPool(
            dsn, pool_size, setup=_decode_json, timeout=PG_CONNECT_TIMEOUT_SECONDS
        )
        self._listeners: dict[asyncio.Event, asyncpg.Connection] = {}
        self._joints = _JointGroupCommit(self)
        self._lookups = _SharedLookups(self)

    def connection(
        self, *, first: bool = False
    ) -> contextlib.AbstractAsyncContextManager[asyncpg.Connection]:
        """A connection of the process's pool (``storage.pgpool``: first come, first served;
        ``first``: ahead of those waiting), given back when the block ends."""
        return self._pool.connection(first=first)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self.connection() as raw, raw.transaction():
            yield PostgresConnection(raw)

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Connection]:
        async with self.connection() as raw:
            yield PostgresConnection(raw)

    async def fetch_one(self, statement: Statement, params: Params) -> Any | None:
        if isinstance(statement, SharedLookup):  # with other callers' (``_SharedLookups``)
            return await self._lookups.fetch_one(statement, params[statement.key])
        return await super().fetch_one(statement, params)

    async def autocommit(self, statement: Statement, params: Params) -> Result:
        """One statement as a transaction of its own: one round trip, no BEGIN or COMMIT."""
        async with self.read() as conn:
            return await conn.execute(statement, params)

    async def commit_joint(self, joint: JointRows) -> bool:
        """Commit ``joint``'s rows, with other callers' (``_JointGroupCommit``); returns once
        they are committed (False: nobody was woken before), or raises what refused them."""
        await self._joints.commit(joint)
        return False

    async def prepare(self, statements: Sequence[Statement], *, connections: int) -> None:
        """Open up to ``connections`` of the pool's connections (the idle ones first, then new
        ones, side by side) and have PostgreSQL parse ``statements`` on each, then give them back.

        A fresh process otherwise paid for this in its first burst of work, on the path of its
        first events: each new connection (a backend forked and set up), asyncpg's look-up of
        the types a statement uses, once per connection, and each statement's first parse on
        each backend, whose catalog caches start empty. The prepared statements are the driver's
        public ones and are not kept: a statement's first run on a connection parses it again, on a
        backend whose caches are now warm.
        """
        sqls = [compiled_for(statement, self.dialect).sql for statement in statements]

        async def ready_one() -> None:
            async with self.connection() as raw:
                for sql in sqls:
                    await raw.prepare(sql)

        await asyncio.gather(*(ready_one() for _ in range(connections)))

    async def listen(self, channel: str, callback: Callable[[str], None]) -> asyncio.Event:
        """LISTEN on a dedicated connection (not the pool's: it stays open); ``callback`` gets
        each payload. Returns an event set when that connection is lost; ``unlisten`` closes it."""
        raw = await asyncpg.connect(self.dsn, timeout=PG_CONNECT_TIMEOUT_SECONDS)
        lost = asyncio.Event()
        raw.add_termination_listener(lambda _conn: lost.set())
        try:
            await raw.add_listener(channel, lambda _c, _pid, _ch, payload: callback(payload))
        except BaseException as exc:
            raw.terminate()  # not left open behind a failed LISTEN
            if isinstance(exc, asyncpg.InternalClientError):
                # A server shutting down ended the new connection (``storage.pgpool``).
                raise ConnectionBroken(f"the connection to PostgreSQL broke: {exc}") from exc
            raise
        self._listeners[lost] = raw
        return lost

    async def unlisten(self, lost: asyncio.Event) -> None:
        raw = self._listeners.pop(lost, None)
        if raw is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(raw.close(timeout=2))

    async def close(self) -> None:
        await self._joints.drain()
        await self._lookups.drain()
        await self._pool.close()


class _Batches(Generic[_Item]):
    """Callers' items sent in batches: the items queued while a batch is in flight become the
    next batch, sent by one task; each caller gets its own outcome. A cancelled caller (client
    gone) cancels only its own future, which the batch then skips: its item is sent all the
    same. No ``asyncio.shield`` and no done-callback per caller: a POST on PostgreSQL queues
    twice (its key look-up, its rows), and a shield per caller costs two futures and their
    callbacks."""

    MAX_CALLERS = 256

    def __init__(self, connector: PostgresConnector) -> None:
        self._connector = connector
        self._queued: _Queued[_Item] = []
        self._sender: asyncio.Task[None] | None = None

    async def _queue(self, item: _Item) -> Any:
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queued.append((item, done))
        if self._sender is None:
            self._sender = asyncio.ensure_future(self._send_queued())
        return await done

    async def drain(self) -> None:
        """Wait for every queued caller's item to be sent (and answered)."""
        while self._sender is not None:
            await asyncio.shield(self._sender)

    async def _send_queued(self) -> None:
        batch: _Queued[_Item] = []
        try:
            while self._queued:
                batch = self._queued[: self.MAX_CALLERS]
                del self._queued[: self.MAX_CALLERS]
                for group in _grouped(batch, self._statement_of):
                    await self._send(group)
        except BaseException as exc:  # cancelled (the loop is closing): nobody waits for ever
            for _, done in [*batch, *self._queued]:
                _settle(done, exc)
            self._queued.clear()
            raise
        finally:
            self._sender = None

    def _statement_of(self, item: _Item) -> Any:
        raise NotImplementedError

    async def _send(self, group: _Queued[_Item]) -> None:
        """Send ``group`` (items of one statement) and settle each caller's future."""
        raise NotImplementedError


class _JointGroupCommit(_Batches[JointRows]):
    """Group commit for ``JointRows`` on PostgreSQL: concurrent callers' rows in one round trip.

    Each caller's rows are one statement (``JointInsert.combined``). The rows queued while a
    batch is in flight become the next batch, sent as one ``executemany`` of that statement:
    asyncpg sends every execution before one Sync, so PostgreSQL runs them as one implicit
    transaction, all or nothing, with one commit (one WAL flush) and one round trip on one
    pooled connection, where each caller would take a connection of its own for its round trip
    and queue for the pool behind the key look-ups. A caller returns only after the commit that
    holds its rows, as durable as a statement committed alone (PostgreSQL's ``synchronous_commit``
    decides).

    A batch that a constraint refuses (one caller's bad row) is retried one caller at a time, so
    only that caller gets the ``IntegrityError``; any other failure (the connection lost) goes
    to every caller of the batch, none of whose rows is committed.
    """

    async def commit(self, joint: JointRows) -> None:
        await self._queue(joint)

    def _statement_of(self, item: JointRows) -> Any:
        return item.insert

    async def _send(self, group: _Queued[JointRows]) -> None:
        try:
            await self._insert_all([joint for joint, _ in group])
        except IntegrityError:
            await self._insert_one_by_one(group)
        except Exception as exc:  # the database unreachable: the batch's callers get it
            for _, done in group:
                _settle(done, exc)
        else:
            for _, done in group:
                _settle(done, None)

    async def _insert_all(self, joints: list[JointRows]) -> None:
        # Ahead of the requests waiting for a connection: this round trip is many requests'.
        async with self._connector.connection(first=True) as raw:
            await _insert_joints(raw, joints)

    async def _insert_one_by_one(self, group: _Queued[JointRows]) -> None:
        for joint, done in group:
            try:
                await self._insert_all([joint])
            except Exception as exc:
                _settle(done, exc)
            else:
                _settle(done, None)


class _SharedLookups(_Batches[tuple[SharedLookup, Any]]):
    """``SharedLookup``s on PostgreSQL: the keys of the callers queued while a look-up is in
    flight go as the next one, one statement (``SharedLookup.many``) and one round trip for all
    of them. Every request's API key is looked up so (``queries.keys.LIVE_BY_HASH``): one
    round trip each would take a pooled connection per request, and far more CPU per look-up.
    Each caller's statement is sent after it asked, so it reads what was committed before."""

    async def fetch_one(self, lookup: SharedLookup, key: Any) -> Any | None:
        return await self._queue((lookup, key))

    def _statement_of(self, item: tuple[SharedLookup, Any]) -> Any:
        return _lookup_of(item)

    async def _send(self, group: _Queued[tuple[SharedLookup, Any]]) -> None:
        lookup = group[0][0][0]
        try:
            async with self._connector.read() as conn:
                rows = await conn.execute(lookup.many, {lookup.key: _keys_of(group)})
        except Exception as exc:  # the database unreachable: the batch's callers get it
            _settle_lookups(group, exc, {})
            return
        _settle_lookups(group, None, _by_key(lookup, rows))


_Queued = list[tuple[_Item, "asyncio.Future[Any]"]]


def _grouped(batch: _Queued[_Item], statement_of: Callable[[_Item], Any]) -> list[_Queued[_Item]]:
    """``batch``'s callers by statement, each group in the callers' order."""
    groups: dict[Any, _Queued[_Item]] = {}
    for item, done in batch:
        groups.setdefault(statement_of(item), []).append((item, done))
    return list(groups.values())


def _lookup_of(item: tuple[SharedLookup, Any]) -> SharedLookup:
    return item[0]


def _keys_of(group: _Queued[tuple[SharedLookup, Any]]) -> list[Any]:
    """The distinct keys of ``group``'s callers (one key asked twice is read once)."""
    return list({key for (_, key), _ in group})


def _by_key(lookup: SharedLookup, rows: Iterable[Any]) -> dict[Any, Any]:
    """The rows of ``lookup.many`` by their key (the column it adds)."""
    found: dict[Any, Any] = {}
    for row in rows:
        found.setdefault(getattr(row, lookup.key), row)
    return found


def _settle_lookups(
    group: _Queued[tuple[SharedLookup, Any]], exc: Exception | None, found: Mapping[Any, Any]
) -> None:
    """Each caller of ``group`` gets ``exc``, or its key's row of ``found`` (None if absent)."""
    for (_, key), done in group:
        _settle(done, exc, found.get(key))


def _settle(done: asyncio.Future[Any], exc: BaseException | None, result: Any = None) -> None:
    if done.done():
        return
    if exc is None:
        done.set_result(result)
    elif isinstance(exc, Exception):
        done.set_exception(exc)
    else:
        done.cancel()


async def _decode_json(conn: asyncpg.Connection) -> None:
    # SQLAlchemy's asyncpg dialect expects json/jsonb decoded by a type codec (its JSON types
    # have no result processor); its bind processors already send them as text.
    for type_name in ("json", "jsonb"):
        await conn.set_type_codec(
            type_name, schema="pg_catalog", encoder=_as_is, decoder=orjson.loads, format="text"
        )


def _as_is(value: str) -> str:
    return value
