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
  caller's transaction. On SQLite the statement goes straight to the ``sqlite3`` connection that
  holds the transaction (it runs inline anyway, see ``storage.db``); on PostgreSQL it goes through
  SQLAlchemy, which owns the transaction there. The delivery worker's statements run this way.

Expanding parameters (``bindparam("ids", expanding=True)`` for ``IN`` lists) are rendered per
call by SQLAlchemy's own ``construct_expanded_state``; literal values inside a statement (a
``LIMIT 1``) are filled in from the statement.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import CompoundSelect, Insert, Select, Update
from sqlalchemy.sql.compiler import SQLCompiler

if TYPE_CHECKING:
    from hookline.storage.db import Database

Processor = Callable[[Any], Any] | None
Statement = Select[Any] | CompoundSelect[Any] | Insert | Update


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
    """A namedtuple class for the selected columns (None for writes)."""
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
        if isinstance(self.statement, Select | CompoundSelect):
            columns = list(self.statement.selected_columns)
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


async def execute(
    conn: AsyncConnection, statement: DirectStatement, params: Mapping[str, Any]
) -> int:
    """Run a write in ``conn``'s transaction; returns the number of rows it changed."""
    raw = sqlite3_connection_of(conn)
    if raw is None:
        return int((await conn.execute(statement.statement, dict(params))).rowcount or 0)
    sql, arguments = statement.compiled(conn.dialect).render(params)
    return int(raw.execute(sql, arguments).rowcount)


async def execute_many(
    conn: AsyncConnection, statement: DirectStatement, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Run a write once per row (``executemany``) in ``conn``'s transaction."""
    if not rows:
        return
    raw = sqlite3_connection_of(conn)
    if raw is None:
        await conn.execute(statement.statement, [dict(row) for row in rows])
        return
    compiled = statement.compiled(conn.dialect)
    raw.executemany(compiled.sql, [compiled.arguments(row) for row in rows])


async def fetch_all(
    conn: AsyncConnection, statement: DirectStatement, params: Mapping[str, Any]
) -> list[Any]:
    """Every row of a read in ``conn``'s transaction (attributes named after the columns)."""
    raw = sqlite3_connection_of(conn)
    if raw is None:
        return list((await conn.execute(statement.statement, dict(params))).all())
    compiled = statement.compiled(conn.dialect)
    sql, arguments = compiled.render(params)
    return [compiled.decode(row) for row in raw.execute(sql, arguments).fetchall()]
