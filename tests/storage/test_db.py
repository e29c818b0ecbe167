"""``storage.db``: SQLite group commit shares COMMITs; each unit still commits or fails alone."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError

from hookline.storage import db as db_module
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts
from hookline.timeutil import utcnow
from tests.conftest import make_settings


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(make_settings(f"sqlite:///{tmp_path / 'group.db'}"))
    await upgrade_to_head(database)
    yield database
    await database.dispose()


def committed_ids(database: Database) -> set[str]:
    """Account ids as a separate connection sees them: only what is committed."""
    path = str(database.writer.url.database)
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
    commit = db_module._Batch.commit

    async def counted(batch: db_module._Batch) -> None:
        nonlocal commits
        commits += 1
        await commit(batch)

    monkeypatch.setattr(db_module._Batch, "commit", counted)

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
