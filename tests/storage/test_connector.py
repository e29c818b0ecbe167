"""``storage.connector``: SQLite reads run inline, but each lets the tasks already waiting run
first, so one read-only request cannot hold the others until it has answered."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from hookline.storage.models import accounts
from hookline.storage.statements import Query
from tests.conftest import make_settings

_ANY_ACCOUNT = Query(select(accounts.c.id).limit(1))


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(make_settings(f"sqlite:///{tmp_path / 'reads.db'}"))
    await upgrade_to_head(database)
    yield database
    await database.dispose()


async def _one_row(database: Database) -> None:
    await database.fetch_one(_ANY_ACCOUNT, {})


async def _read_block(database: Database) -> None:
    async with database.read() as conn:
        await conn.execute(_ANY_ACCOUNT)


@pytest.mark.parametrize("read", [_one_row, _read_block], ids=["fetch_one", "read"])
async def test_a_read_lets_the_waiting_tasks_run_first(
    sqlite_db: Database, read: Callable[[Database], Awaitable[None]]
) -> None:
    order: list[str] = []

    async def waiting() -> None:
        order.append("waiting task")

    task = asyncio.create_task(waiting())  # ready, but runs only when this task suspends
    await read(sqlite_db)
    order.append("read done")
    await task
    assert order == ["waiting task", "read done"]
