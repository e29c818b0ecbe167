"""The few statements every request runs, executed through the driver rather than SQLAlchemy.

Profiles of ``hookline serve`` showed a primary-key read costing ~250 µs through SQLAlchemy's async
layer (pool checkout, greenlet hand-offs, result objects), against 2-5 µs for the same statement in
``sqlite3`` (docs/benchmarks.md). Every API request runs at least one such read (its key), so the
hot statements skip that layer:

* ``DirectStatement`` wraps a SQLAlchemy Core statement. It is compiled once per dialect, and it
  keeps SQLAlchemy's own bind and result processors for its columns, so values are stored and read
  exactly as through SQLAlchemy (timestamps as UTC, JSON columns decoded).
* ``fetch_one(source, ...)`` reads one row. Given the ``Database``, it uses the driver directly
  (SQLite: one inline ``sqlite3`` connection in autocommit mode, so each SELECT is its own
  snapshot; PostgreSQL: an asyncpg pool with prepared statements). Given a SQLAlchemy connection,
  for callers already inside a transaction, it runs the statement on that connection.
* ``execute(conn, ...)``, ``execute_many(conn, ...)`` and ``fetch_all(conn, ...)`` run inside the
  caller's transaction. The statement goes straight to the driver connection that holds the
  transaction: on SQLite its ``sqlite3`` connection (it runs inline anyway, see ``storage.db``);
  on PostgreSQL the asyncpg connection under SQLAlchemy's, once the transaction has begun
  (``asyncpg_connection_of``). SQLAlchemy still owns BEGIN, COMMIT and ROLLBACK. The delivery
  worker's statements run this way: on PostgreSQL, 14% less of the worker's CPU per delivery
  than through SQLAlchemy's execute (docs/benchmarks.md). Given the ``Database`` instead,
  ``fetch_all`` runs one statement as a transaction of its own on the asyncpg pool (PostgreSQL
  only; the worker's claim, ``delivery.manager``).

``JointInsert`` covers the other hot write: a change and its outbox event, two INSERTs that only
ever commit together. On PostgreSQL it is one statement (the first INSERTs as data-modifying
CTEs), so a POST /v1/contacts that owns its transaction (``Database.commit_rows``) is one round
trip on the asyncpg pool instead of BEGIN, two INSERTs and COMMIT through SQLAlchemy; a single
statement is atomic on its own. On SQLite, which has no INSERT in a CTE, the INSERTs run one after
another in the caller's transaction, inline.

Expanding parameters (``bindparam("ids", expanding=True)`` for ``IN`` lists) are rendered per
call by SQLAlchemy's own ``construct_expanded_state``, a new SQL text for each list length; hot
statements take their lists as one parameter instead (``storage.lists``), so their SQL never
changes. Literal values inside a statement (a ``LIMIT 1``) are filled in from the statement.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, bindparam
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import CompoundSelect, Delete, Insert, Select, Update
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.selectable import TextualSelect

if TYPE_CHECKING:
    from hookline.storage.db import Database

Processor = Callable[[Any], Any] | None
Statement = Select[Any] | CompoundSelect[Any] | TextualSelect | Insert | Update | Delete


# (position, processor) for the positions that have one: most columns have none, and skipping them
# made decoding a row 3x faster than calling through a processor-or-None per column.
Processors = tuple[tuple[int, Callable[[Any], Any]], ...]


@dataclass(frozen=True, slots=True)
class Compiled:
    sql: str
    names: tuple[str, ...]
    """Bind parameter names, in the driver's positional order."""
    bind_at: Processors
    row: Any
    """A namedtuple class for the selected or returned columns (None for other writes)."""
    decode_at: Processors
    defaults: Mapping[str, Any]
    """Values of the statement's own literal parameters (e.g. ``LIMIT 1``)."""
    expanding: SQLCompiler | None
    """Set when a parameter is a list (``IN``): the SQL is then rendered per call."""
    binder_of: Mapping[str, Processor]

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        if self.defaults:
            params = {**self.defaults, **params}
        arguments = [params[name] for name in self.names]
        for at, binder in self.bind_at:
            arguments[at] = binder(arguments[at])
        return arguments

    def render(self, params: Mapping[str, Any]) -> tuple[str, list[Any]]:
        """The SQL and positional arguments for one call."""
        if self.expanding is None:
            return self.sql, self.arguments(params)
        state = self.expanding.construct_expanded_state({**self.defaults, **params})
        processors = state.processors or {}
        arguments = []
        for name in state.positiontup or ():
            value = state.parameters[name]
            binder = processors.get(name) or self.binder_of.get(name)
            arguments.append(value if binder is None else binder(value))
        return state.statement, arguments

    def decode(self, values: Any) -> Any:
        if not self.decode_at:
            return self.row._make(values)
        decoded = list(values)
        for at, decoder in self.decode_at:
            decoded[at] = decoder(decoded[at])
        return self.row._make(decoded)


def _processors_at(processors: Sequence[Processor]) -> Processors:
    return tuple((at, p) for at, p in enumerate(processors) if p is not None)


class DirectStatement:
    """A Core statement with named bind parameters, compiled once per dialect.

    ``column_keys``: for an ``Insert``, the columns the rows supply (default: every column).
    """

    def __init__(self, statement: Statement, *, column_keys: list[str] | None = None) -> None:
        self.statement = statement
        self._column_keys = column_keys
        self._compiled: dict[str, Compiled] = {}

    def compiled(self, dialect: Dialect) -> Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            found = self._compiled[dialect.name] = self._compile(dialect)
        return found

    def _compile(self, dialect: Dialect) -> Compiled:
        compiled = self.statement.compile(dialect=dialect, column_keys=self._column_keys)
        assert isinstance(compiled, SQLCompiler)
        names = tuple(compiled.positiontup or ())
        binder_of = {
            name: bind.type.dialect_impl(dialect).bind_processor(dialect)
            for name, bind in compiled.binds.items()
        }
        defaults = {
            name: bind.effective_value
            for name, bind in compiled.binds.items()
            if name in names and not bind.required
        }
        expanding = compiled if any(b.expanding for b in compiled.binds.values()) else None
        row_class: Any = None
        decoders: list[Processor] = []
        # What a read selects, or what a write RETURNs (none: the row class stays None).
        columns = list(self.statement.exported_columns)
        if columns:
            row_class = _row_class([str(c.key) for c in columns])
            decoders = [
                c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns
            ]
        return Compiled(
            compiled.string,
            names,
            _processors_at([binder_of[name] for name in names]),
            row_class,
            _processors_at(decoders),
            defaults,
            expanding,
            binder_of,
        )


def _row_class(names: list[str]) -> Any:
    # A namedtuple: attribute access like SQLAlchemy's rows, at a tuple's cost.
    return namedtuple("Row", names)


async def fetch_one(
    source: Database | AsyncConnection, statement: DirectStatement, params: Mapping[str, Any]
) -> Any | None:
    """The first row (attributes named after the columns), or None."""
    if isinstance(source, AsyncConnection):
        return (await source.execute(statement.statement, dict(params))).first()
    return await source.fetch_one(statement, params)


def sqlite3_connection_of(conn: AsyncConnection) -> Any:
    """The ``sqlite3`` connection holding ``conn``'s transaction, or None (PostgreSQL)."""
    driver = conn.sync_connection.connection.driver_connection if conn.sync_connection else None
    return getattr(driver, "sqlite3_connection", None)


@asynccontextmanager
async def asyncpg_connection_of(conn: AsyncConnection) -> AsyncIterator[Any]:
    """The asyncpg connection under ``conn`` (PostgreSQL), inside ``conn``'s transaction.

    SQLAlchemy's asyncpg adapter sends BEGIN lazily, before its first statement; a statement
    sent to the driver directly must not run ahead of it, so this starts the transaction the
    way the adapter would. COMMIT and ROLLBACK stay with SQLAlchemy, which owns the transaction.

    Interrupted inside the block (a cancelled task, a KeyboardInterrupt), it invalidates ``conn``,
    as SQLAlchemy does when its own statements are interrupted: the driver's state is then
    unknown. Without it, a worker cancelled just after its BEGIN reached PostgreSQL (before the
    adapter recorded it) returned that transaction to the pool still open, and every later
    "transaction" on the connection ran as a savepoint inside it and never committed.
    """
    assert conn.sync_connection is not None
    adapter: Any = conn.sync_connection.connection.dbapi_connection
    try:
        if adapter._transaction is None:  # the adapter's lazy BEGIN, see above
            await adapter._start_transaction()
        yield adapter.driver_connection
    except BaseException as exc:
        if not isinstance(exc, Exception):
            await conn.invalidate()
        raise


async def execute(
    conn: AsyncConnection, statement: DirectStatement, params: Mapping[str, Any]
) -> int:
    """Run a write in ``conn``'s transaction; returns the number of rows it changed."""
    sql, arguments = statement.compiled(conn.dialect).render(params)
    raw = sqlite3_connection_of(conn)
    if raw is not None:
        return int(raw.execute(sql, arguments).rowcount)
    async with asyncpg_connection_of(conn) as driver:
        return _rowcount(await driver.execute(sql, *arguments))


def _rowcount(status: str) -> int:
    # PostgreSQL's command tag: "UPDATE 3", "DELETE 0", "INSERT 0 1".
    last = status.rpartition(" ")[2]
    return int(last) if last.isdigit() else 0


async def execute_many(
    conn: AsyncConnection, statement: DirectStatement, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Run a write once per row (``executemany``) in ``conn``'s transaction."""
    if not rows:
        return
    compiled = statement.compiled(conn.dialect)
    arguments = [compiled.arguments(row) for row in rows]
    raw = sqlite3_connection_of(conn)
    if raw is not None:
        raw.executemany(compiled.sql, arguments)
        return
    async with asyncpg_connection_of(conn) as driver:
        await driver.executemany(compiled.sql, arguments)


async def fetch_all(
    source: Database | AsyncConnection, statement: DirectStatement, params: Mapping[str, Any]
) -> list[Any]:
    """Every row (attributes named after the columns) of a statement in ``source``'s
    transaction; given the ``Database``, of one statement that is a transaction of its own
    (``Database.fetch_all``: PostgreSQL only)."""
    if not isinstance(source, AsyncConnection):
        return await source.fetch_all(statement, params)
    conn = source
    compiled = statement.compiled(conn.dialect)
    sql, arguments = compiled.render(params)
    raw = sqlite3_connection_of(conn)
    if raw is not None:
        rows = raw.execute(sql, arguments).fetchall()
    else:
        async with asyncpg_connection_of(conn) as driver:
            rows = await driver.fetch(sql, *arguments)
    return [compiled.decode(row) for row in rows]


class JointInsert:
    """One row into each of several tables, always committed together (see the module doc).

    Each row supplies every column of its table.
    """

    def __init__(self, *tables: Table) -> None:
        self.parts = tuple(DirectStatement(table.insert()) for table in tables)
        self.combined = DirectStatement(_one_statement(tables))

    def rows(self, *rows: Mapping[str, Any]) -> JointRows:
        assert len(rows) == len(self.parts), "one row per table"
        return JointRows(self, rows)


@dataclass(frozen=True, slots=True)
class JointRows:
    """The rows of one ``JointInsert``: a write the caller runs (``insert_joint``) or commits
    (``Database.commit_rows``)."""

    insert: JointInsert
    rows: tuple[Mapping[str, Any], ...]

    def combined_params(self) -> dict[str, Any]:
        """The parameters of ``JointInsert.combined``: each row's, prefixed by its position."""
        return {
            f"{_prefix(at)}{key}": value
            for at, row in enumerate(self.rows)
            for key, value in row.items()
        }


def _prefix(at: int) -> str:
    return f"t{at}_"


def _one_statement(tables: Sequence[Table]) -> Insert:
    # Distinct parameter names per table: the tables share column names (id, account_id, ...).
    inserts = [
        table.insert().values(
            {
                column.key: bindparam(f"{_prefix(at)}{column.key}", type_=column.type)
                for column in table.columns
            }
        )
        for at, table in enumerate(tables)
    ]
    *first, last = inserts
    return last.add_cte(*(insert.cte(f"t{at}") for at, insert in enumerate(first)))


async def insert_joint(conn: AsyncConnection, joint: JointRows) -> None:
    """Insert ``joint``'s rows in ``conn``'s transaction."""
    if sqlite3_connection_of(conn) is None:
        await execute(conn, joint.insert.combined, joint.combined_params())
        return
    for part, row in zip(joint.insert.parts, joint.rows, strict=True):
        await execute(conn, part, row)
