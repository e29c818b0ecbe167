"""``queries.contacts.OUT`` reads a contact's timestamps in the contract's spelling on both
backends: on PostgreSQL the statement spells them (``to_char``), on SQLite ``SpelledTime``
slices the stored text; either way the text is ``timeutil.iso`` of the stored instant."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import asyncpg
import orjson
import pytest
from sqlalchemy import text

from hookline import ids
from hookline.domain import contacts as domain
from hookline.domain import keys
from hookline.storage.connector import POSTGRES_DIALECT, SQLITE_DIALECT, Connection
from hookline.storage.db import Database
from hookline.storage.models import contacts
from hookline.storage.queries import contacts as queries
from hookline.timeutil import iso
from tests.conftest import make_settings
from tests.support.contacts import bare_contact
from tests.support.templates import MigratedDatabases

_EDGES = [
    datetime(2026, 11, 22, 15, 4, 5, 123999, tzinfo=UTC),  # truncated, not rounded
    datetime(2026, 11, 22, 15, 4, 5, tzinfo=UTC),  # no fraction
    datetime(2026, 11, 22, 15, 4, 5, 999, tzinfo=UTC),  # under a millisecond
    datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2000, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=2))),  # the day before in UTC
    datetime(1, 1, 2, 0, 0, 0, 1, tzinfo=UTC),  # a year of one digit
    datetime(987, 6, 5, 4, 3, 2, 100000, tzinfo=UTC),  # of three
    datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC),
]
_RANDOM = random.Random(19)
# Any instant of the years the API can spell, at any offset, to the microsecond.
_INSTANTS = _EDGES + [
    datetime(1, 1, 2, tzinfo=UTC)
    + timedelta(microseconds=_RANDOM.randrange(3_155_000_000_000_000_00))
    for _ in range(200)
]


@pytest.fixture(params=["sqlite", "postgres"])
async def db(
    migrated: MigratedDatabases, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Database]:
    url = await migrated.url(request.param, tmp_path, request)
    if request.param == "postgres":
        # A session time zone far from UTC, and not a whole hour: the spelling must not follow it.
        raw = await asyncpg.connect(url)
        try:
            name = await raw.fetchval("SELECT current_database()")
            await raw.execute(f"ALTER DATABASE \"{name}\" SET timezone = 'Asia/Kathmandu'")
        finally:
            await raw.close()
    database = Database(make_settings(url))
    try:
        yield database
    finally:
        await database.dispose()


async def test_a_contacts_timestamps_read_as_iso_of_the_stored_instant(db: Database) -> None:
    async with db.begin() as conn:
        account = await keys.create_account(conn, "spelling")
        rows = [
            bare_contact(account, ids.contact_id(), at, at + timedelta(microseconds=999))
            for at in _INSTANTS
        ]
        await conn.execute(contacts.insert(), rows)
    expected = {row["id"]: (iso(row["created_at"]), iso(row["updated_at"])) for row in rows}
    async with db.read() as conn:
        listed = await domain.list_contacts(
            conn, account, domain.ContactFilters(), limit=len(rows) + 1
        )
    assert {c["id"]: (c["created_at"], c["updated_at"]) for c in listed} == expected
    # The reads by id (a GET, a PATCH's FOR UPDATE, a DELETE's RETURNING) select the same OUT.
    first = rows[0]["id"]
    found = await domain.get_contact(db, account, first)
    assert found is not None and (found["created_at"], found["updated_at"]) == expected[first]
    async with db.begin() as conn:
        deleted = await domain.delete_contact(conn, account, first)
    assert deleted is not None
    assert (deleted["created_at"], deleted["updated_at"]) == expected[first]


def test_postgresql_spells_the_timestamps_in_the_statement() -> None:
    """What makes the PostgreSQL read cheap: the driver is handed text, with nothing to decode."""
    compiled = queries.BY_ID.compiled(POSTGRES_DIALECT)
    assert compiled.sql.count("to_char(") == 2
    assert compiled.decode_at == ()
    assert "to_char(" not in queries.BY_ID.compiled(SQLITE_DIALECT).sql


async def _long_way(
    conn: Connection, account: str, filters: domain.ContactFilters, limit: int, **where: Any
) -> tuple[bytes, str | None]:
    found = await domain.list_contacts(conn, account, filters, limit=limit + 1, **where)
    return orjson.dumps(found[:limit]), found[limit - 1]["id"] if len(found) > limit else None


async def test_a_page_is_the_long_ways_first_contacts_and_where_the_next_starts(
    db: Database,
) -> None:
    """``contacts_page`` (on SQLite each contact's JSON as SQLite writes it) answers what
    ``list_contacts`` does: the same body, and the last id exactly when more follow, for a
    walk by cursor, an offset, a filter, and a tag filter (read the long way on both)."""
    async with db.begin() as conn:
        account = await keys.create_account(conn, "pages")
        at = datetime(2026, 11, 22, 15, 4, 5, 123456, tzinfo=UTC)
        rows = [
            {
                **bare_contact(account, ids.contact_id(), at + timedelta(seconds=n)),
                "first_name": f'Ada "{n}" \\ é\n',
                "email": f"ada{n}@example.com" if n % 2 else None,
                "tags": ["vip", f"t{n}"] if n % 3 else [],
            }
            for n in range(7)
        ]
        await conn.execute(contacts.insert(), rows)
    everyone = domain.ContactFilters()
    async with db.read() as conn:
        walked: list[Any] = []
        before_id: str | None = None
        while True:
            page = await domain.contacts_page(conn, account, everyone, limit=3, before_id=before_id)
            expected = await _long_way(conn, account, everyone, 3, before_id=before_id)
            assert (orjson.dumps(page.items), page.last_id) == expected
            if db.is_sqlite:  # what makes it cheap: SQLite's text, not a dict
                assert all(isinstance(item, orjson.Fragment) for item in page.items)
            else:
                assert all(isinstance(item, dict) for item in page.items)
            walked += orjson.loads(orjson.dumps(page.items))
            if page.last_id is None:
                break
            before_id = page.last_id
        assert [c["id"] for c in walked] == [r["id"] for r in reversed(rows)]
        for filters, offset in [
            (everyone, 2),
            (everyone, 7),
            (domain.ContactFilters(search='"3"'), None),
            (domain.ContactFilters(email="ada5@example.com"), None),
            (domain.ContactFilters(tags=("vip",)), 1),
        ]:
            page = await domain.contacts_page(conn, account, filters, limit=2, offset=offset)
            assert (orjson.dumps(page.items), page.last_id) == await _long_way(
                conn, account, filters, 2, offset=offset
            ), (filters, offset)


async def test_a_page_with_a_row_sqlite_cannot_write_is_read_the_long_way(db: Database) -> None:
    """A timestamp in another spelling (``CURRENT_TIMESTAMP``'s, as a hand-written UPDATE
    leaves it): the page is the long way's, every contact in it spelled by ``iso``."""
    async with db.begin() as conn:
        account = await keys.create_account(conn, "odd")
        at = datetime(2026, 11, 22, 15, 4, 5, 123456, tzinfo=UTC)
        rows = [bare_contact(account, ids.contact_id(), at) for _ in range(3)]
        await conn.execute(contacts.insert(), rows)
        stored = "'2026-11-22 15:04:05'" if db.is_sqlite else "'2026-11-22 15:04:05+00'"
        await conn.execute(
            text(f"UPDATE contacts SET created_at = {stored} WHERE id = :id"),  # noqa: S608
            {"id": rows[1]["id"]},
        )
    async with db.read() as conn:
        page = await domain.contacts_page(conn, account, domain.ContactFilters(), limit=2)
        assert (orjson.dumps(page.items), page.last_id) == await _long_way(
            conn, account, domain.ContactFilters(), 2
        )
    # the long way's dicts (a Fragment, SQLite's text, would be left out and fail the match)
    assert [c["created_at"] for c in page.items if isinstance(c, dict)] == [
        "2026-11-22T15:04:05.123Z",
        "2026-11-22T15:04:05.000Z",
    ]
