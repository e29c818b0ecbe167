"""``queries.contacts.contact_json``: SQLite writes a contact's JSON, byte for byte what the API
wrote from the same row the long way (``contact_out`` through orjson), or NULL when it cannot.

The rows go in through the app's own INSERT (as the API stores them), or as raw text where a
column holds what the app never writes (another timestamp spelling, JSON ``null`` tags)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.schema import CreateTable

from hookline.domain.contacts import contact_out
from hookline.storage.connector import POSTGRES_DIALECT, SQLITE_DIALECT, SQLiteConnection
from hookline.storage.models import contacts
from hookline.storage.queries import contacts as queries
from hookline.storage.statements import Query
from tests.support.contacts import bare_contact

_INSERT = Query(contacts.insert())
_EVERY_SHAPE = queries.ListShape(
    phone_number=False, email=False, search=False, before_id=False, offset=False
)
_PARAMS = {"account_id": "acct", "limit": 1000, "offset": None}


def _table() -> sqlite3.Connection:
    raw = sqlite3.connect(":memory:", isolation_level=None)
    raw.execute(str(CreateTable(contacts).compile(dialect=SQLITE_DIALECT)))
    return raw


@pytest.fixture
def raw() -> Iterator[sqlite3.Connection]:
    connection = _table()
    try:
        yield connection
    finally:
        connection.close()


def _both_ways(conn: SQLiteConnection) -> list[tuple[str | None, str]]:
    """Each row as SQLite writes it (``LIST_JSON``) and as the API writes it the long way."""
    written = conn.run(queries.LIST_JSON.get(_EVERY_SHAPE), _PARAMS).all()
    long_way = conn.run(queries.LIST.get(_EVERY_SHAPE), _PARAMS).all()
    assert [row.id for row in written] == [row.id for row in long_way]
    return [
        (row.json, orjson.dumps(contact_out(read)).decode())
        for row, read in zip(written, long_way, strict=True)
    ]


def _store(conn: SQLiteConnection, row: dict[str, Any]) -> None:
    conn.run(_INSERT, row)


_TEXT = st.text()  # any character but a lone surrogate: control ones, NUL, quotes, non-ASCII
_OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
_INSTANT = st.builds(
    lambda naive, zone: naive.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.one_of(st.just(UTC), _OFFSETS),
)


@given(
    first_name=_TEXT,
    optional=st.fixed_dictionaries(
        {
            "last_name": st.none() | _TEXT,
            "email": st.none() | _TEXT,
            "company": st.none() | _TEXT,
            "notes": st.none() | _TEXT,
            "phone_number": _TEXT,
            "do_not_call": st.booleans(),
            "do_not_call_reason": st.none() | _TEXT,
        }
    ),
    tags=st.lists(_TEXT, max_size=4),
    created_at=_INSTANT,
    updated_at=_INSTANT,
)
def test_sqlite_writes_the_json_the_api_writes_from_the_same_row(
    first_name: str,
    optional: dict[str, str | bool | None],
    tags: list[str],
    created_at: datetime,
    updated_at: datetime,
) -> None:
    raw = _table()
    conn = SQLiteConnection(raw)
    try:
        row = {
            **bare_contact("acct", "c1", created_at, updated_at),
            **optional,
            "first_name": first_name,
            "tags": tags,
        }
        _store(conn, row)
        [(written, long_way)] = _both_ways(conn)
        assert written == long_way
    finally:
        raw.close()


@pytest.mark.parametrize(
    ("column", "stored"),
    [
        ("created_at", "2026-11-22 15:04:05"),  # CURRENT_TIMESTAMP's
        ("updated_at", "2026-11-22T17:04:05.5+02:00"),
        ("created_at", "2026-11-22 17:04:05.123+02"),  # 26 characters, with an offset
        ("updated_at", "2026-11-22 15:04:05.1-0530"),  # 26 characters too
        ("created_at", "2026-11-22T15:04:05.123456"),  # the other separator
        ("updated_at", "2026-11-22 15:04:05.123456+00:00"),
        ("tags", "null"),  # the API reads it as []
    ],
)
def test_a_row_sqlite_cannot_write_so_is_null(
    raw: sqlite3.Connection, column: str, stored: str
) -> None:
    """Text the app never stores (a hand-written UPDATE, a column default): SQLite writes no
    JSON for that row, so the page is read the long way (``domain.contacts_page``), and the
    rows beside it are still written."""
    conn = SQLiteConnection(raw)
    at = datetime(2026, 11, 22, 15, 4, 5, 123456, tzinfo=UTC)
    _store(conn, bare_contact("acct", "c1", at))
    _store(conn, bare_contact("acct", "c2", at))
    raw.execute(f"UPDATE contacts SET {column} = ? WHERE id = 'c2'", (stored,))  # noqa: S608
    # Newest (greatest id) first: c2, then c1.
    (odd, _), (plain, plain_long_way) = _both_ways(conn)
    assert odd is None
    assert plain == plain_long_way


def test_postgresql_writes_no_json() -> None:
    """Its JSON functions space their output (``{"id" : ...}``); the list reads ``OUT`` there."""
    sql = queries.LIST_JSON.get(_EVERY_SHAPE).compiled(POSTGRES_DIALECT).sql
    assert "json_object" not in sql and "CAST(NULL AS TEXT)" in sql
