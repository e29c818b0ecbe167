"""``storage.pgpool``: callers get connections in the order they asked; a connection its holder
left unusable (inside a transaction, interrupted mid-statement) is never handed on; a cancelled
waiter loses nobody's place."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from hookline.storage.pgpool import FairPool, PoolClosed
from tests.support.postgres import PostgresServer


async def _nothing(_raw: asyncpg.Connection) -> None:
    return None


@pytest.fixture
async def pool(pg_server: PostgresServer) -> AsyncIterator[FairPool]:
    url = make_url(pg_server.create_database()).set(drivername="postgresql")
    fair = FairPool(url.render_as_string(hide_password=False), 1, setup=_nothing, timeout=5)
    yield fair
    await fair.close()


async def _backend_pid(pool: FairPool) -> int:
    async with pool.connection() as raw:
        pid: int = await raw.fetchval("SELECT pg_backend_pid()")
        return pid


async def test_a_connection_is_reused(pool: FairPool) -> None:
    assert await _backend_pid(pool) == await _backend_pid(pool)


async def test_a_connection_left_inside_a_transaction_is_not_handed_on(pool: FairPool) -> None:
    async with pool.connection() as raw:
        first = await raw.fetchval("SELECT pg_backend_pid()")
        await raw.execute("BEGIN")
    async with pool.connection() as raw:
        assert not raw.is_in_transaction()
        assert await raw.fetchval("SELECT pg_backend_pid()") != first


async def test_a_holder_cancelled_mid_statement_frees_its_place_for_a_fresh_connection(
    pool: FairPool,
) -> None:
    started = asyncio.Event()

    async def slow() -> None:
        async with pool.connection() as raw:
            started.set()
            await raw.execute("SELECT pg_sleep(30)")

    holder = asyncio.ensure_future(slow())
    await started.wait()
    waiter = asyncio.ensure_future(_backend_pid(pool))  # the pool's one place is taken
    holder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holder
    assert await asyncio.wait_for(waiter, timeout=5) > 0  # not 30 s behind pg_sleep


async def test_an_error_inside_the_block_keeps_the_connection(pool: FairPool) -> None:
    before = await _backend_pid(pool)
    with pytest.raises(asyncpg.UndefinedTableError):
        async with pool.connection() as raw:
            await raw.execute("SELECT * FROM no_such_table")
    assert await _backend_pid(pool) == before


async def test_waiters_are_served_in_order_and_a_cancelled_one_passes_its_turn_on(
    pool: FairPool,
) -> None:
    served: list[str] = []

    async def use(name: str) -> None:
        async with pool.connection():
            served.append(name)

    held = await pool.acquire()
    first, second, third = (asyncio.ensure_future(use(n)) for n in ("first", "second", "third"))
    await asyncio.sleep(0)  # all three wait, in this order
    pool.release(held)  # handed to the first...
    first.cancel()  # ...cancelled before it could run: the second gets it
    await asyncio.wait_for(asyncio.gather(second, third), timeout=5)
    assert served == ["second", "third"]
    assert first.cancelled()


async def test_closing_fails_the_waiting(pool: FairPool) -> None:
    held = await pool.acquire()
    waiter = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    await pool.close()
    with pytest.raises(PoolClosed):
        await waiter
    pool.release(held)  # given back after the close: closed, not kept
    assert held.is_closed()
