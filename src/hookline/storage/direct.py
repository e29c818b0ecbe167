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
* ``execute(conn, ...)`` runs a write inside the caller's transaction. On SQLite the statement goes
  straight to the ``sqlite3`` connection that holds the transaction (it runs inline anyway, see
  ``storage.db``); on PostgreSQL it goes through SQLAlchemy, which owns the transaction there.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql import Insert, Select

if TYPE_CHECKING:
    from hookline.storage.db import Database

Processor = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class Compiled:
    sql: str
    names: tuple[str, ...]
    """Bind parameter names, in the driver's positional order."""
    binders: tuple[Processor, ...]
    row: Any
    """A namedtuple class for the selected columns (None for writes)."""
    decoders: tuple[Processor, ...]

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        return [
            value if binder is None else binder(value)
            for binder, value in zip(self.binders, (params[n] for n in self.names), strict=True)
        ]

    def decode(self, values: Any) -> Any:
        return self.row._make(
            value if decoder is None else decoder(value)
            for decoder, value in zip(self.decoders, values, strict=True)
        )


class DirectStatement:
    """A Core ``Select`` or ``Insert`` with named bind parameters, compiled once per dialect."""

    def __init__(self, statement: Select[Any] | Insert) -> None:
        self.statement = statement
        self._compiled: dict[str, Compiled] = {}

    def compiled(self, dialect: Dialect) -> Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            found = self._compiled[dialect.name] = self._compile(dialect)
        return found

    def _compile(self, dialect: Dialect) -> Compiled:
        compiled = self.statement.compile(dialect=dialect)
        names = tuple(compiled.positiontup or ())
        binders = tuple(
            compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect)
            for name in names
        )
        row_class: Any = None
        decoders: tuple[Processor, ...] = ()
        if isinstance(self.statement, Select):
            columns = list(self.statement.selected_columns)
            row_class = _row_class([str(c.key) for c in columns])
            decoders = tuple(
                c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns
            )
        return Compiled(compiled.string, names, binders, row_class, decoders)


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


async def execute(
    conn: AsyncConnection, statement: DirectStatement, params: Mapping[str, Any]
) -> None:
    """Run a write in ``conn``'s transaction."""
    driver = conn.sync_connection.connection.driver_connection if conn.sync_connection else None
    raw = getattr(driver, "sqlite3_connection", None)
    if raw is None:
        await conn.execute(statement.statement, dict(params))
        return
    compiled = statement.compiled(conn.dialect)
    raw.execute(compiled.sql, compiled.arguments(params))
