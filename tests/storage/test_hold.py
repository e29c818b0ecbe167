"""``Database.hold()``: one transaction for every ``begin()`` of a task, committed by its holder;
on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import select

from hookline.domain import contacts as contacts_domain
from hookline.storage.connector import Connection
from hookline.storage.db import Database, Preempted
from hookline.storage.models import accounts, contacts
from hookline.timeutil import utcnow
from tests.conftest import Account


def new_ids(count: int) -> list[str]:
    return [f"hold-{uuid.uuid4()}" for _ in range(count)]


async def add_account(db: Database, account_id: str, *, fail: bool = False) -> None:
    async with db.begin() as conn:
        await insert_account(conn, account_id)
        if fail:
            raise RuntimeError(f"{account_id} fails after its write")


async def insert_account(conn: Connection, account_id: str) -> None:
    await conn.execute(accounts.insert().values(id=account_id, name="hold", created_at=utcnow()))


async def committed(db: Database, ids: list[str]) -> set[str]:
    """What another connection sees: only committed rows."""
    async with db.read() as conn:
        rows = await conn.execute(select(accounts.c.id).where(accounts.c.id.in_(ids)))
        return {row.id for row in rows}


async def nothing_first(_conn: Connection) -> None:
    return None


async def test_every_block_joins_one_transaction_that_commits_at_the_end(db: Database) -> None:
    ids = new_ids(3)
    opened: list[str] = []

    async def opener(conn: Connection) -> None:
        opened.append("opened")
        await insert_account(conn, ids[0])

    woken: list[set[str]] = []
    async with db.hold(opener):
        await add_account(db, ids[1])
        await add_account(db, ids[2])
        db.after_commit(lambda: woken.append(set()))
        assert await committed(db, ids) == set()
        assert woken == []
    assert opened == ["opened"]
    assert await committed(db, ids) == set(ids)
    assert len(woken) == 1


async def test_after_commit_outside_hold_runs_at_once(db: Database) -> None:
    woken: list[bool] = []
    db.after_commit(lambda: woken.append(True))
    assert woken == [True]


async def test_rollback_discards_everything_and_every_after_commit(db: Database) -> None:
    ids = new_ids(2)
    woken: list[bool] = []
    async with db.hold(nothing_first) as held:
        await add_account(db, ids[0])
        db.after_commit(lambda: woken.append(True))
        await held.rollback()
        # A block after the rollback opens a new transaction, committed at the end.
        await add_account(db, ids[1])
    assert await committed(db, ids) == {ids[1]}
    assert woken == []


async def test_an_exception_in_the_holder_rolls_everything_back(db: Database) -> None:
    ids = new_ids(2)
    with pytest.raises(RuntimeError, match="holder fails"):
        async with db.hold(nothing_first):
            await add_account(db, ids[0])
            await add_account(db, ids[1])
            raise RuntimeError("holder fails after the writes")
    assert await committed(db, ids) == set()


async def test_a_later_block_that_fails_rolls_back_alone(db: Database) -> None:
    ids = new_ids(2)
    async with db.hold(nothing_first):
        await add_account(db, ids[0])
        with pytest.raises(RuntimeError):
            await add_account(db, ids[1], fail=True)
    assert await committed(db, ids) == {ids[0]}


async def test_the_first_block_failing_leaves_nothing_open(db: Database) -> None:
    ids = new_ids(2)
    async with db.hold(nothing_first):
        with pytest.raises(RuntimeError):
            await add_account(db, ids[0], fail=True)
        await add_account(db, ids[1])
    assert await committed(db, ids) == {ids[1]}


class Taken(Preempted):
    pass


async def test_a_preempted_opener_reaches_the_caller_with_nothing_open(db: Database) -> None:
    ids = new_ids(1)

    async def refuse(conn: Connection) -> None:
        raise Taken

    async with db.hold(refuse):
        with pytest.raises(Taken):
            await add_account(db, ids[0])
    assert await committed(db, ids) == set()
    await add_account(db, ids[0])  # the writer is free again
    assert await committed(db, ids) == set(ids)


async def test_tasks_started_inside_hold_use_their_own_transactions(db: Database) -> None:
    ids = new_ids(2)
    async with db.hold(nothing_first):
        await add_account(db, ids[0])
        if db.is_sqlite:
            # One writer: another transaction waits for the held one, so it can't finish here.
            task = asyncio.create_task(add_account(db, ids[1]))
        else:
            await asyncio.create_task(add_account(db, ids[1]))
            assert await committed(db, ids) == {ids[1]}
    if db.is_sqlite:
        await task
    assert await committed(db, ids) == set(ids)


async def test_commit_rows_joins_the_held_transaction(db: Database, account: Account) -> None:
    contact, rows = contacts_domain.contact_creation(
        account.id, {"first_name": "Held", "phone_number": "+14155550100"}
    )

    async def visible() -> bool:
        async with db.read() as conn:
            found = await conn.execute(select(contacts.c.id).where(contacts.c.id == contact["id"]))
            return found.first() is not None

    with pytest.raises(RuntimeError):
        async with db.hold(nothing_first):
            await db.commit_rows(rows)
            assert not await visible()
            raise RuntimeError("the request fails after its write")
    assert not await visible()
    async with db.hold(nothing_first):
        await db.commit_rows(rows)
    assert await visible()
