"""The statement modules (``storage.queries``) hold only statements compiled once per dialect.

A statement left as a bare Core construct would be compiled by SQLAlchemy on every call (tens
to hundreds of µs, more than running it on the hot paths); every one here must be a
``Query`` (or ``QueryShapes``), and each must compile on both dialects, so a statement that
only one backend's tests reach cannot hide an error for the other.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest
from sqlalchemy.sql import Executable

from hookline.storage import queries
from hookline.storage.connector import POSTGRES_DIALECT, SQLITE_DIALECT
from hookline.storage.statements import Query

# Every module of storage.queries but the clauses they share.
MODULES = tuple(
    importlib.import_module(f"{queries.__name__}.{found.name}")
    for found in pkgutil.iter_modules(queries.__path__)
    if found.name != "common"
)


def _statements(module: ModuleType) -> dict[str, object]:
    return {
        name: value for name, value in vars(module).items() if isinstance(value, Query | Executable)
    }


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_every_statement_is_a_query_compiled_once_on_both_dialects(module: ModuleType) -> None:
    statements = _statements(module)
    assert statements
    bare = [name for name, value in statements.items() if not isinstance(value, Query)]
    assert bare == [], "build these once, at import: Query(...)"
    for name, query in statements.items():
        assert isinstance(query, Query)
        for dialect in (SQLITE_DIALECT, POSTGRES_DIALECT):
            compiled = query.compiled(dialect)
            assert compiled.sql, name
            assert query.compiled(dialect) is compiled, f"{name} compiled again"
