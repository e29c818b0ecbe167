"""``domain.webhooks``: the per-account cap holds while another create of the account is under
way: on PostgreSQL because each create locks the account's row before it counts (and counts in a
statement of its own, whose snapshot sees what the lock's previous holder committed); on SQLite
because writes take turns at the single writer."""

from __future__ import annotations

import asyncio

from sqlalchemy import text

from hookline.crypto import SecretBox
from hookline.domain import webhooks as domain
from hookline.errors import ValidationFailed
from hookline.storage.connector import Connection
from hookline.storage.db import Database
from hookline.storage.migrate import upgrade_to_head
from tests.conftest import TEST_SECRET_KEY, Account, make_settings, new_account
from tests.support.postgres import PostgresServer
from tests.support.waiting import eventually

CAP = 3
BOX = SecretBox(TEST_SECRET_KEY)


async def _add(db: Database, account: Account) -> bool:
    """One more webhook in a transaction of its own; False when the cap refuses it."""
    try:
        async with db.begin() as conn:
            await _add_in(conn, account)
    except ValidationFailed:
        return False
    return True


async def _add_in(conn: Connection, account: Account) -> None:
    url = await domain.check_url("https://example.com/hook", allow_private=True)
    await domain.create_webhook(
        conn,
        account.id,
        url=url,
        events=["call.started"],
        box=BOX,
        max_webhooks=CAP,
    )


async def _waiting_for_a_lock(db: Database) -> int:
    async with db.read() as conn:
        waiting = await conn.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        )
    return int(waiting or 0)


async def test_a_create_waits_for_one_under_way_and_counts_its_webhook_on_postgres(
    pg_server: PostgresServer,
) -> None:
    db = Database(make_settings(pg_server.create_database()))
    try:
        await upgrade_to_head(db)
        account = await new_account(db, "capped")
        for _ in range(CAP - 1):
            assert await _add(db, account)
        async with db.begin() as conn:
            await _add_in(conn, account)  # the last one the cap allows, not committed yet
            other = asyncio.create_task(_add(db, account))
            # Until the other create waits for this one (or, were it not to, has finished).
            await eventually(
                lambda: _waiting_for_a_lock(db),
                lambda waiting: waiting > 0 or other.done(),
                what="the second create waiting for the account's lock",
            )
        assert await other is False
        async with db.read() as conn:
            assert len(await domain.list_webhooks(conn, account.id)) == CAP
    finally:
        await db.dispose()


async def test_concurrent_creates_never_pass_the_cap(db: Database, account: Account) -> None:
    for _ in range(CAP - 1):
        assert await _add(db, account)
    created = await asyncio.gather(*(_add(db, account) for _ in range(6)))
    assert sorted(created) == [False] * 5 + [True]
    async with db.read() as conn:
        assert len(await domain.list_webhooks(conn, account.id)) == CAP
