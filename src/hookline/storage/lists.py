"""``column IN <list parameter>`` with one SQL text for a list of any length.

SQLAlchemy's expanding parameters (``bindparam("ids", expanding=True)``) render ``IN ($1, ...,
$n)`` per call, so every list length is a different statement. The drivers cache prepared
statements by their SQL text (asyncpg keeps 100 per connection, ``sqlite3`` 128), and the
delivery worker's batches have any length from 1 to its send slots, across half a dozen
statements: the caches thrash, and every miss costs a prepare (on PostgreSQL an extra round trip
and a plan). Rendering the expanded SQL also cost ~5% of the worker's CPU (docs/benchmarks.md).
Measured with asyncpg on this machine, five statement shapes with lists of 1-64 ids: 560-660 µs
a query with ``IN (...)``, 280-300 µs with ``= ANY($1)``.

``in_list(column, name)`` takes the whole list as one parameter instead:

* PostgreSQL: ``column = ANY($1)``, the parameter a ``VARCHAR[]``;
* SQLite: ``column IN (SELECT value FROM json_each(?))``, the parameter the list as JSON text.

``not_in_list`` is its negation (``<> ALL``, ``NOT IN``). An empty list matches nothing (and
its negation everything), as an empty ``IN`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import BindParameter, Boolean, ColumnElement, String, bindparam
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import operators
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import BinaryExpression
from sqlalchemy.types import TypeDecorator, TypeEngine


class StringList(TypeDecorator[Sequence[str]]):
    """A list of strings as one bound value: an array on PostgreSQL, JSON text on SQLite."""

    impl = String
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(ARRAY(String()))
        return dialect.type_descriptor(String())

    def process_bind_param(self, value: Sequence[str] | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        items = list(value)
        return items if dialect.name == "postgresql" else orjson.dumps(items).decode()


class _InList(BinaryExpression[bool]):
    """``column IN <list>``: a comparison (a ``BinaryExpression`` with ``IN``'s operator), so
    SQLite renders it as a condition its planner serves from an index, never as a boolean
    value ("(... IN ...) = 1"); its SQL comes from the dialect's function below."""

    inherit_cache = True

    def __init__(self, column: ColumnElement[Any], values: BindParameter[Any], negate: bool):
        operator = operators.not_in_op if negate else operators.in_op
        super().__init__(column, values, operator, type_=Boolean())
        self.excluding = negate


def in_list(column: ColumnElement[Any], name: str) -> ColumnElement[bool]:
    """``column`` is one of the strings in the list parameter ``name``."""
    return _InList(column, bindparam(name, type_=StringList()), negate=False)


def not_in_list(column: ColumnElement[Any], name: str) -> ColumnElement[bool]:
    """``column`` is none of the strings in the list parameter ``name``."""
    return _InList(column, bindparam(name, type_=StringList()), negate=True)


@compiles(_InList)
def _in_json_each(element: _InList, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.left, **kw)
    values = compiler.process(element.right, **kw)
    operator = "NOT IN" if element.excluding else "IN"
    # Both parts are compiled SQL (a column and a bind placeholder), never a value.
    return f"{column} {operator} (SELECT value FROM json_each({values}))"  # noqa: S608


@compiles(_InList, "postgresql")
def _any_of_array(element: _InList, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.left, **kw)
    values = compiler.process(element.right, **kw)
    return f"{column} <> ALL ({values})" if element.excluding else f"{column} = ANY ({values})"
