"""``dashboard.users``: an account never ends without a member. A removal locks the account's
row before its conditional DELETE, so on PostgreSQL a second removal waits for the first and
sees its outcome; on SQLite writes take turns at the single writer."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from hookline.dashboard import users
from hookline.domain import keys
from hookline.storage.db import Database
from tests.dashboard.conftest import unique_email
from tests.support.waiting import eventually


async def _pair(db: Database) -> tuple[str, users.User, users.User]:
    async with db.begin() as conn:
        account_id = await keys.create_account(conn, "pair")
        first = await users.create_user(conn, account_id, unique_email("first"), "unused hash")
        second = await users.create_user(conn, account_id, unique_email("second"), "unused hash")
    return account_id, first, second


async def _members(db: Database, account_id: str) -> list[str]:
    async with db.read() as conn:
        return [member.id for member in await users.list_users(conn, account_id)]


async def _waiting_for_a_lock(db: Database) -> int:
    async with db.read() as conn:
        waiting = await conn.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        )
    return int(waiting or 0)


async def _remove(db: Database, account_id: str, user_id: str, remover_id: str) -> bool:
    async with db.begin() as conn:
        return await users.remove_user(conn, account_id, user_id, remover_id)


async def test_a_removal_under_way_refuses_the_other_member_removing_its_remover(
    db: Database,
) -> None:
    account_id, first, second = await _pair(db)
    async with db.begin() as conn:
        assert await users.remove_user(conn, account_id, second.id, first.id)  # not committed
        other = asyncio.create_task(_remove(db, account_id, first.id, second.id))
        if not db.is_sqlite:
            # Until the other removal waits for this one (or, were it not to, has finished).
            await eventually(
                lambda: _waiting_for_a_lock(db),
                lambda waiting: waiting > 0 or other.done(),
                what="the second removal waiting for the account's lock",
            )
    with pytest.raises(users.RemovalRefused):
        await other
    assert await _members(db, account_id) == [first.id]


async def test_nobody_removes_themselves_or_a_member_of_another_account(db: Database) -> None:
    account_id, first, second = await _pair(db)
    other_account, stranger, _ = await _pair(db)
    async with db.begin() as conn:
        assert not await users.remove_user(conn, account_id, first.id, first.id)
        assert not await users.remove_user(conn, account_id, stranger.id, first.id)
        assert not await users.remove_user(conn, other_account, second.id, stranger.id)
    assert await _members(db, account_id) == [first.id, second.id]
    assert len(await _members(db, other_account)) == 2
