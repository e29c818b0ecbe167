"""``storage.pgpool``: callers get connections in the order they asked; a connection its holder
left unusable (inside a transaction, interrupted mid-statement) is never handed on; a cancelled
waiter loses nobody's place; a PostgreSQL restart costs no caller more than the connection it
was using, and never a 500."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from hookline.storage.outage import is_store_unavailable
from hookline.storage.pgpool import ConnectionBroken, FairPool, PoolClosed
from tests.support.postgres import PostgresServer, running_postgres


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


async def test_a_connection_is_given_back_without_a_reset_query(pool: FairPool) -> None:
    """Session state survives a release (asyncpg's reset would run ``RESET ALL`` and more): a
    release costs no round trip."""
    async with pool.connection() as raw:
        await raw.execute("SET application_name = 'kept'")
    async with pool.connection() as raw:
        assert await raw.fetchval("SHOW application_name") == "kept"


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


async def test_a_caller_asking_first_is_served_before_those_waiting(pool: FairPool) -> None:
    served: list[str] = []

    async def use(name: str, *, first: bool = False) -> None:
        async with pool.connection(first=first):
            served.append(name)

    held = await pool.acquire()
    waiting = [asyncio.ensure_future(use(n)) for n in ("one", "two")]
    await asyncio.sleep(0)  # both wait, in this order
    committer = asyncio.ensure_future(use("first", first=True))
    await asyncio.sleep(0)
    pool.release(held)
    await asyncio.wait_for(asyncio.gather(committer, *waiting), timeout=5)
    assert served == ["first", "one", "two"]


async def test_closing_fails_the_waiting(pool: FairPool) -> None:
    held = await pool.acquire()
    waiter = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    await pool.close()
    with pytest.raises(PoolClosed):
        await waiter
    pool.release(held)  # given back after the close: closed, not kept
    assert held.is_closed()


# A PostgreSQL restart, with a cluster of this module's own (the shared one is never stopped).


@pytest.fixture(scope="module")
def restartable() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


def _notice(message: str) -> bytes:
    """A NoticeResponse message of PostgreSQL's protocol, as the server would send one."""
    fields = b"SNOTICE\0C00000\0M" + message.encode() + b"\0\0"
    return b"N" + struct.pack("!i", 4 + len(fields)) + fields


class EndHeldBack:
    """A TCP proxy to PostgreSQL that, when the server ends a connection, passes on all it sent
    (its FATAL) and then a NOTICE, and keeps the client's side open: the moment between a
    restarting server's FATAL and the end of its socket, which lasted a turn of the loop or tens
    of milliseconds in ``hookline serve``, held until the test has looked. The client has read
    the FATAL once it has read the NOTICE behind it (a log listener sees that)."""

    def __init__(self, upstream_port: int) -> None:
        self._upstream_port = upstream_port
        self._server: asyncio.Server | None = None
        self._clients: list[asyncio.StreamWriter] = []
        self._pipes: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def __aexit__(self, *_exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._clients:
            writer.close()
        for pipe in self._pipes:
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self._clients.append(client_w)
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self._upstream_port)
        self._clients.append(server_w)
        for pipe in (self._pipe(client_r, server_w), self._pipe(server_r, client_w, end=False)):
            task = asyncio.ensure_future(pipe)
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    @staticmethod
    async def _pipe(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, end: bool = True
    ) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            if end:
                writer.close()
            else:  # the server is gone: say so in-band, keep the socket open
                writer.write(_notice("the server ended this connection"))
                await writer.drain()


def _pool_on(port: int, setup: Callable[[asyncpg.Connection], None]) -> FairPool:
    async def run_setup(raw: asyncpg.Connection) -> None:
        setup(raw)

    return FairPool(
        f"postgresql://postgres@127.0.0.1:{port}/postgres", 1, setup=run_setup, timeout=5
    )


async def test_a_connection_its_restarted_server_ended_is_a_503_once_and_never_handed_on(
    restartable: PostgresServer,
) -> None:
    """Its FATAL read, its socket not yet closed: the next statement fails inside asyncpg ("cannot
    switch to state 12; another operation (2) is in progress"). That caller gets an outage (a
    503), the connection is dropped, and the next caller gets a new one, not the same failure."""
    fatal_read = asyncio.Event()
    async with EndHeldBack(restartable.port) as port:
        pool = _pool_on(port, lambda raw: raw.add_log_listener(lambda *_: fatal_read.set()))
        try:
            before = await _backend_pid(pool)  # idle in the pool now
            await asyncio.to_thread(restartable.stop)
            await asyncio.wait_for(fatal_read.wait(), timeout=10)
            await asyncio.to_thread(restartable.start)
            with pytest.raises(ConnectionBroken) as broken:
                await _backend_pid(pool)
            assert isinstance(broken.value.__cause__, asyncpg.InternalClientError)
            assert is_store_unavailable(broken.value)
            assert await _backend_pid(pool) != before
        finally:
            await pool.close()


async def test_a_connection_lost_while_idle_is_not_handed_out_after_a_restart(
    restartable: PostgresServer,
) -> None:
    """The first statement after the server is back succeeds: the pool opens a new connection in
    the place of the one the restart closed, rather than hand that out to fail."""
    lost = asyncio.Event()
    pool = _pool_on(
        restartable.port, lambda raw: raw.add_termination_listener(lambda _: lost.set())
    )
    try:
        before = await _backend_pid(pool)
        await asyncio.to_thread(restartable.stop)
        await asyncio.wait_for(lost.wait(), timeout=10)
        await asyncio.to_thread(restartable.start)
        assert await _backend_pid(pool) != before
    finally:
        await pool.close()
