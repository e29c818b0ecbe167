"""``storage.db``: SQLite group commit shares COMMITs; each unit still commits or fails alone.
``commit_rows`` is all or nothing; a pooled PostgreSQL read is one round trip."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import bindparam, select, update

from hookline.domain import contacts as contacts_domain
from hookline.storage import connector as connector_module
from hookline.storage.connector import IntegrityError, PostgresConnector, SQLiteConnector
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts, contacts, events
from hookline.storage.statements import JointRows, Query
from hookline.timeutil import utcnow
from tests.conftest import Account, make_settings, new_account
from tests.support.postgres import PostgresServer
from tests.support.waiting import eventually


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(make_settings(f"sqlite:///{tmp_path / 'group.db'}"))
    await upgrade_to_head(database)
    yield database
    await database.dispose()


def committed_ids(database: Database) -> set[str]:
    """Account ids as a separate connection sees them: only what is committed."""
    assert isinstance(database.connector, SQLiteConnector)
    path = database.connector.path
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM accounts WHERE name = 'unit'")}


async def write_account(database: Database, account_id: str, *, fail: bool = False) -> None:
    async with database.begin() as conn:
        await conn.execute(
            accounts.insert().values(id=account_id, name="unit", created_at=utcnow())
        )
        if fail:
            raise RuntimeError(f"unit {account_id} fails after its write")


async def test_concurrent_writers_share_commits_and_return_once_committed(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = 0
    commit = connector_module._Batch.commit

    async def counted(batch: connector_module._Batch) -> None:
        nonlocal commits
        commits += 1
        await commit(batch)

    monkeypatch.setattr(connector_module._Batch, "commit", counted)

    async def write_then_look(n: int) -> None:
        await write_account(sqlite_db, f"acct_{n}")
        assert f"acct_{n}" in committed_ids(sqlite_db)  # begin() returned: it is durable

    await asyncio.gather(*(write_then_look(n) for n in range(30)))
    assert committed_ids(sqlite_db) == {f"acct_{n}" for n in range(30)}
    assert 1 <= commits <= 3  # 30 units, queued together, commit in a few transactions


async def test_a_failing_unit_rolls_back_alone(sqlite_db: Database) -> None:
    failing = {n for n in range(12) if n % 3 == 1}
    results = await asyncio.gather(
        *(write_account(sqlite_db, f"acct_{n}", fail=n in failing) for n in range(12)),
        return_exceptions=True,
    )
    assert [n for n, result in enumerate(results) if isinstance(result, RuntimeError)] == sorted(
        failing
    )
    assert committed_ids(sqlite_db) == {f"acct_{n}" for n in range(12) if n not in failing}


async def test_a_constraint_violation_leaves_the_shared_transaction_usable(
    sqlite_db: Database,
) -> None:
    await write_account(sqlite_db, "acct_taken")
    results = await asyncio.gather(
        write_account(sqlite_db, "acct_a"),
        write_account(sqlite_db, "acct_taken"),  # duplicate primary key
        write_account(sqlite_db, "acct_b"),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], IntegrityError)
    assert committed_ids(sqlite_db) == {"acct_taken", "acct_a", "acct_b"}


async def _stored(database: Database, joint: JointRows) -> tuple[bool, bool]:
    """Whether the contact and the event of ``joint`` are committed."""
    contact_row, event_row = joint.rows
    async with database.read() as conn:
        contact = await conn.execute(
            select(contacts.c.id).where(contacts.c.id == contact_row["id"])
        )
        event = await conn.execute(select(events.c.id).where(events.c.id == event_row["id"]))
        return contact.first() is not None, event.first() is not None


async def test_committed_rows_are_all_there_once_it_returns(db: Database, account: Account) -> None:
    contact, joint = contacts_domain.contact_creation(
        account.id, {"first_name": "Ada", "phone_number": "+15551234567"}
    )
    await db.commit_rows(joint)
    assert await _stored(db, joint) == (True, True)
    assert contact["id"] == joint.rows[0]["id"]


async def test_committed_rows_are_all_or_nothing(db: Database, account: Account) -> None:
    """The contact is written first; its event's foreign key then fails: neither is kept."""
    _contact, joint = contacts_domain.contact_creation(
        account.id, {"first_name": "Ada", "phone_number": "+15551234567"}
    )
    contact_row, event_row = joint.rows
    broken = joint.insert.rows(contact_row, {**event_row, "account_id": "account-missing"})
    with pytest.raises(IntegrityError):
        await db.commit_rows(broken)
    assert await _stored(db, joint) == (False, False)


_ACCOUNT_NAME = Query(select(accounts.c.name).where(accounts.c.id == bindparam("id")))


async def test_a_pooled_read_is_one_round_trip(pg_server: PostgresServer) -> None:
    """asyncpg's default pool reset would send a second query after each read."""
    database = Database(make_settings(pg_server.create_database(), db_pool_size=1))
    await upgrade_to_head(database)
    try:
        await database.fetch_one(_ACCOUNT_NAME, {"id": "warm-up"})  # opens the pool
        sent: list[str] = []
        assert isinstance(database.connector, PostgresConnector)
        async with database.connector.connection() as conn:  # the pool's only idle connection
            conn.add_query_logger(lambda record: sent.append(record.query))
        sent.clear()
        for n in range(3):
            await database.fetch_one(_ACCOUNT_NAME, {"id": f"account-{n}"})

        async def logged() -> list[str]:  # asyncpg calls its query loggers soon, not at once
            return sent

        await eventually(logged, lambda queries: len(queries) >= 3, what="3 queries logged")
        assert len(sent) == 3 and all(query.startswith("SELECT accounts.name") for query in sent)
    finally:
        await database.dispose()


_RENAME_RETURNING = Query(
    update(accounts)
    .where(accounts.c.id == bindparam("b_id"))
    .values(name=bindparam("b_name"))
    .returning(accounts.c.id, accounts.c.name, accounts.c.created_at)
)


async def test_a_statement_on_its_own_commits_and_returns_its_rows(db: Database) -> None:
    if db.is_sqlite:
        # SQLite's writes go through the single writer; the method refuses rather than bypass it.
        with pytest.raises(RuntimeError, match="begin"):
            await db.fetch_all(_RENAME_RETURNING, {"b_id": "x", "b_name": "y"})
        return
    account = await new_account(db, "before")
    [row] = await db.fetch_all(_RENAME_RETURNING, {"b_id": account.id, "b_name": "after"})
    assert (row.id, row.name) == (account.id, "after")
    assert row.created_at.tzinfo is not None  # decoded as through SQLAlchemy
    async with db.read() as conn:  # another connection sees it: committed
        name = await conn.execute(select(accounts.c.name).where(accounts.c.id == account.id))
        assert name.scalar_one() == "after"
