"""SQLAlchemy Core statements compiled for the drivers, and the results callers read.

Every statement of hookline is a SQLAlchemy Core statement (or ``text()``) and runs through a
``storage.connector`` connection, one way: ``await conn.execute(statement, params)``. SQLAlchemy
only builds and compiles it; the driver (``sqlite3`` or asyncpg) runs it. A statement is compiled
once per dialect, with SQLAlchemy's own bind and result processors for its columns, so values are
stored and read exactly as SQLAlchemy would (timestamps as UTC, JSON columns decoded):

* ``Query(statement)``, built once at import with named ``bindparam``s, is compiled on first use
  per dialect and kept: the way to write any statement that runs per request.
* A statement whose shape varies with its input (a list's filters) is a ``QueryShapes``: one
  ``Query`` per shape, its values as parameters.
* A look-up of one row by one key that every request makes (the API key's) is a
  ``SharedLookup``: a ``Query``, which on PostgreSQL concurrent callers share.
* Any other statement (built per call, its values inline) is compiled when it runs. That costs
  SQLAlchemy's compiler once per call: the statements of
  ``storage.queries`` are all ``Query``s, and a test holds them to it.

``Result`` has the surface callers used on SQLAlchemy's results (``.all()``, ``.first()``,
``.one()``, ``.scalar()``, ``.scalars()``, ``.mappings()``, ``.rowcount``, iteration); rows are
named tuples (attribute access, ``._mapping``).

Expanding parameters (``bindparam("ids", expanding=True)`` for ``IN`` lists) are rendered per
call by SQLAlchemy's public ``construct_expanded_state``, a new SQL text per list length; hot
statements take their lists as one parameter instead (``storage.lists``).
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Select, Table, bindparam
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import MultipleResultsFound, NoResultFound
from sqlalchemy.sql import ClauseElement, Insert
from sqlalchemy.sql.compiler import SQLCompiler

from hookline.storage.lists import in_list
from hookline.storage.models import events

Processor = Callable[[Any], Any] | None
# (position, processor) for the positions that have one: most columns have none, and skipping them
# made decoding a row 3x faster than calling through a processor-or-None per column.
Processors = tuple[tuple[int, Callable[[Any], Any]], ...]
Params = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Compiled:
    sql: str
    names: tuple[str, ...]
    """Bind parameter names, in the driver's positional order."""
    bind_at: Processors
    row: Any
    """The row class (a named tuple) of the selected or returned columns; None when the
    statement does not say (a ``text()``): the driver's column names are used."""
    decode_at: Processors
    defaults: Mapping[str, Any]
    """Values the statement carries itself (``.values(...)``, ``LIMIT 1``, a literal)."""
    expanding: SQLCompiler | None
    """Set when a parameter is a list (``IN``): the SQL is then rendered per call."""
    binder_of: Mapping[str, Processor]
    returns_rows: bool

    def arguments(self, params: Params) -> list[Any]:
        if self.defaults:
            params = {**self.defaults, **params}
        arguments = [params[name] for name in self.names]
        for at, binder in self.bind_at:
            arguments[at] = binder(arguments[at])
        return arguments

    def render(self, params: Params) -> tuple[str, list[Any]]:
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

    def rows(self, values: Sequence[Any], names: Callable[[], Sequence[str]]) -> list[Any]:
        """Driver rows as named tuples; ``names`` gives the driver's column names (for a
        ``text()`` statement, whose columns SQLAlchemy does not know).

        Decoded a column at a time: each processor mapped over its column, then the rows
        zipped back together and made by ``tuple.__new__``, all in C loops. Row by row (a
        list per row, a loop over its processors, ``_make``) costs more for a page of rows."""
        if self.row is None:
            row = row_class(tuple(names()))
            return [row._make(v) for v in values]
        if not values:
            return []
        new = functools.partial(tuple.__new__, self.row)
        if not self.decode_at:
            return list(map(new, values))
        columns: list[Iterable[Any]] = list(zip(*values, strict=True))
        for at, decoder in self.decode_at:
            columns[at] = map(decoder, columns[at])
        return list(map(new, zip(*columns, strict=True)))


def _processors_at(processors: Sequence[Processor]) -> Processors:
    return tuple((at, p) for at, p in enumerate(processors) if p is not None)


def compile_statement(
    statement: ClauseElement, dialect: Dialect, column_keys: list[str] | None = None
) -> Compiled:
    compiled = statement.compile(dialect=dialect, column_keys=column_keys)
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
    post_compile = any(b.expanding or b.literal_execute for b in compiled.binds.values())
    row: Any = None
    decoders: list[Processor] = []
    # What a read selects, or what a write RETURNs; a text() says nothing.
    columns = list(getattr(statement, "exported_columns", ()))
    if columns:
        row = row_class(tuple(str(c.key) for c in columns))
        decoders = [c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns]
    return Compiled(
        compiled.string,
        names,
        _processors_at([binder_of[name] for name in names]),
        row,
        _processors_at(decoders),
        defaults,
        compiled if post_compile else None,
        binder_of,
        bool(columns) or _reads(compiled.string),
    )


def _reads(sql: str) -> bool:
    # A text() statement: PostgreSQL needs to know whether to fetch rows or read a command tag.
    return sql.lstrip().split(None, 1)[0].upper() in ("SELECT", "WITH", "VALUES")


def _mapping(row: Any) -> dict[str, Any]:
    return dict(row._asdict())


@functools.lru_cache(maxsize=512)
def row_class(names: tuple[str, ...]) -> Any:
    """A named tuple class: attribute access like SQLAlchemy's rows, at a tuple's cost."""
    base = namedtuple("Row", names, rename=True)  # type: ignore[misc]
    return type("Row", (base,), {"__slots__": (), "_mapping": property(_mapping)})


class Query:
    """A Core statement with named bind parameters, compiled once per dialect.

    ``column_keys``: for an ``Insert``, the columns the rows supply (default: every column).
    """

    def __init__(self, statement: ClauseElement, *, column_keys: list[str] | None = None) -> None:
        self.statement = statement
        self._column_keys = column_keys
        self._compiled: dict[str, Compiled] = {}

    def compiled(self, dialect: Dialect) -> Compiled:
        found = self._compiled.get(dialect.name)
        if found is None:
            found = self._compiled[dialect.name] = compile_statement(
                self.statement, dialect, self._column_keys
            )
        return found


class SharedLookup(Query):
    """A look-up of at most one row by one key, which concurrent callers may share.

    As a ``Query`` it is ``select`` where ``key`` (a column) equals the parameter named as
    that column, its only parameter. On PostgreSQL the connector's ``fetch_one`` sends the keys
    of the callers queued meanwhile as one statement (``many``: ``select`` where ``key`` is one
    of a list, with the key column in its rows), one round trip for all of them
    (``connector._SharedLookups``); on SQLite it reads the keys asked in one turn of the loop
    in the next, one statement for all (``many``; for one key, this one), inline
    (``SQLiteConnector._read_asked``).
    """

    def __init__(self, select: Select[Any], key: Column[Any]) -> None:
        self.key: str = key.key
        super().__init__(select.where(key == bindparam(self.key)))
        self.many = Query(select.add_columns(key.label(self.key)).where(in_list(key, self.key)))


Statement = Query | ClauseElement


class QueryShapes:
    """``Query``s for a statement whose shape varies (which filters a list has), one per shape:
    ``shapes.get(shape, build)`` builds and compiles ``build(shape)`` the first time only. The
    values go in as parameters, never into the statement, so the shapes are few."""

    def __init__(self, build: Callable[[Any], ClauseElement]) -> None:
        self._build = build
        self._queries: dict[Any, Query] = {}

    def get(self, shape: Any) -> Query:
        query = self._queries.get(shape)
        if query is None:
            query = self._queries[shape] = Query(self._build(shape))
        return query


def compiled_for(statement: Statement, dialect: Dialect, params: Params | None = None) -> Compiled:
    """``statement`` compiled for ``dialect``: once for a ``Query``, now for any other. An
    INSERT given its rows' values inserts the columns they name (the others take their
    defaults), as SQLAlchemy's ``execute`` does."""
    if isinstance(statement, Query):
        return statement.compiled(dialect)
    if params and isinstance(statement, Insert):
        return compile_statement(statement, dialect, list(params))
    return compile_statement(statement, dialect)


class Result:
    """The rows of one statement (all fetched) and how many rows it changed."""

    __slots__ = ("_at", "_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return self._rows

    fetchall = all

    def fetchone(self) -> Any | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def first(self) -> Any | None:
        return self._rows[0] if self._rows else None

    def one_or_none(self) -> Any | None:
        if len(self._rows) > 1:
            raise MultipleResultsFound("more than one row")
        return self.first()

    def one(self) -> Any:
        row = self.one_or_none()
        if row is None:
            raise NoResultFound("no row")
        return row

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None

    def scalar_one_or_none(self) -> Any:
        row = self.one_or_none()
        return None if row is None else row[0]

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalars(self) -> Result:
        return Result([row[0] for row in self._rows], self.rowcount)

    def mappings(self) -> Result:
        return Result([row._mapping for row in self._rows], self.rowcount)


class JointInsert:
    """One row into each of several tables, always committed together: a change and its
    outbox event. On PostgreSQL one statement (the first INSERTs as data-modifying CTEs), atomic
    on its own, so committing the rows needs no BEGIN or COMMIT (``Database.commit_rows``); on
    SQLite, which has no INSERT in a CTE, the INSERTs run one after another in a transaction.

    Each row supplies every column of its table.
    """

    def __init__(self, *tables: Table) -> None:
        self.parts = tuple(Query(table.insert()) for table in tables)
        self.has_event = events in tables
        """One of the rows is an outbox event: committing them wakes the workers."""
        self.combined = Query(_one_statement(tables))
        self._picks: dict[str, tuple[Compiled, tuple[tuple[int, str], ...]]] = {}

    def combined_picks(self, dialect: Dialect) -> tuple[Compiled, tuple[tuple[int, str], ...]]:
        """``combined`` compiled, and for each of its parameters the (row, column) it takes."""
        found = self._picks.get(dialect.name)
        if found is None:
            compiled = self.combined.compiled(dialect)
            assert not compiled.defaults, "every column is a parameter"
            picks = tuple(_unprefixed(name) for name in compiled.names)
            found = self._picks[dialect.name] = (compiled, picks)
        return found

    def rows(self, *rows: Params) -> JointRows:
        assert len(rows) == len(self.parts), "one row per table"
        return JointRows(self, rows)


@dataclass(frozen=True, slots=True)
class JointRows:
    """The rows of one ``JointInsert``: a write the caller runs (``Connection.insert_joint``)
    or commits (``Database.commit_rows``)."""

    insert: JointInsert
    rows: tuple[Params, ...]

    def combined_arguments(self, dialect: Dialect) -> list[Any]:
        """The driver's positional arguments for ``JointInsert.combined``: each parameter is
        its row's column (``t<row>_<column>``), picked straight from the rows, without a dict of
        every prefixed name first (every POST builds these)."""
        compiled, picks = self.insert.combined_picks(dialect)
        rows = self.rows
        arguments = [rows[at][key] for at, key in picks]
        for at, binder in compiled.bind_at:
            arguments[at] = binder(arguments[at])
        return arguments


def _prefix(at: int) -> str:
    return f"t{at}_"


def _unprefixed(name: str) -> tuple[int, str]:
    """``_prefix(at) + key`` → (at, key)."""
    at, _, key = name[1:].partition("_")
    return int(at), key


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
