"""Accounts, keys and bulk-loaded contacts, written straight to the database (not via the API).

Contacts go in with one ``executemany`` (SQLite) or ``COPY`` (PostgreSQL) in the same row format
the application writes, so the API reads them like any other contact.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from hookline import ids
from hookline.domain import keys
from hookline.settings import Settings
from hookline.storage.connector import SQLITE_DIALECT
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import contacts
from hookline.storage.statements import Query

SAMPLE_IDS = 1000
COLUMNS = tuple(column.name for column in contacts.c)
_LATER_COLUMNS = {"do_not_call": False, "do_not_call_reason": None}
"""Columns added after the first contacts table, with a seeded contact's value: a row has
every column the build's table has (``bench.ab`` and ``bench.cpu_ab`` seed older builds too)."""


@dataclass(frozen=True)
class Account:
    account_id: str
    api_key: str
    sample_ids: tuple[str, ...]
    """Up to ``SAMPLE_IDS`` contact ids spread over the whole account, for GET by id."""


def seed_account(settings: Settings, name: str, contacts: int, *, migrate: bool = True) -> Account:
    """Migrate (unless ``migrate`` is false: the caller migrated with the build it measures),
    create an account with a full-scope key and ``contacts`` contacts."""
    return asyncio.run(_seed(settings, name, contacts, migrate))


async def _seed(settings: Settings, name: str, count: int, migrate: bool = True) -> Account:
    db = Database(settings)
    try:
        if migrate:
            await upgrade_to_head(db)
        async with db.begin() as conn:
            account_id = await keys.create_account(conn, name)
            api_key, _record = await keys.create_key(conn, account_id, "bench")
    finally:
        await db.dispose()
    rows = _contact_rows(account_id, count)
    if settings.is_postgres:
        await _copy_postgres(settings.database_url, rows)
    else:
        assert settings.sqlite_path is not None
        await asyncio.to_thread(_insert_sqlite, str(settings.sqlite_path), rows)
    sample = random.Random(7).sample(range(count), min(SAMPLE_IDS, count)) if count else []
    return Account(account_id, api_key, tuple(rows[i][0] for i in sample))


def _contact_rows(account_id: str, count: int) -> list[tuple[Any, ...]]:
    """Rows whose ids and timestamps are in the past, older than anything the API writes."""
    start = datetime.now(UTC) - timedelta(days=1)
    tags = ["customer", "bench"]
    rows = []
    for n in range(count):
        created = start + timedelta(microseconds=n * 50)
        rows.append(
            (
                ids.uuid7(),
                account_id,
                f"First{n}",
                f"Last{n}",
                f"+1555{n % 10_000_000:07d}",
                f"person{n}@example.com",
                "Example Inc",
                tags,
                None,
                created,
                created,
                *(_LATER_COLUMNS[name] for name in COLUMNS[11:]),
            )
        )
    return rows


def _insert_sqlite(path: str, rows: list[tuple[Any, ...]]) -> None:
    # The app's own INSERT and bind processors, so the rows are stored exactly as the API would.
    insert = Query(contacts.insert()).compiled(SQLITE_DIALECT)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            insert.sql, (insert.arguments(dict(zip(COLUMNS, row, strict=True))) for row in rows)
        )
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
    finally:
        conn.close()


async def _copy_postgres(url: str, rows: list[tuple[Any, ...]]) -> None:
    import asyncpg

    tags_json = orjson.dumps(["customer", "bench"]).decode()
    conn = await asyncpg.connect(url)
    try:
        await conn.copy_records_to_table(
            "contacts",
            records=[(*r[:7], tags_json, *r[8:]) for r in rows],
            columns=list(COLUMNS),
        )
        await conn.execute("ANALYZE contacts")
    finally:
        await conn.close()
