"""``delivery.wakeup``: what a wake-up puts on the wire, on PostgreSQL and on SQLite."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from hookline.delivery import manager
from hookline.delivery.wakeup import NOTIFY_CHANNEL, SocketWakeup, make_wakeup
from hookline.settings import Settings
from hookline.timeutil import utcnow
from tests.delivery.helpers import Env
from tests.support.waiting import eventually


@asynccontextmanager
async def _notified(env: Env) -> AsyncIterator[asyncio.Queue[str]]:
    """The payloads NOTIFYed on the wake-ups' channel, in commit order, from now on."""
    dsn = make_url(env.base["database_url"]).set(drivername="postgresql")
    listener = await asyncpg.connect(dsn.render_as_string(hide_password=False))
    payloads: asyncio.Queue[str] = asyncio.Queue()

    def received(*args: Any) -> None:
        payloads.put_nowait(args[3])

    await listener.add_listener(NOTIFY_CHANNEL, received)
    try:
        yield payloads
    finally:
        await listener.close()


async def _register(env: Env, worker_id: str) -> None:
    """A worker's row, as ``Worker.start`` writes it (the process is another's or this one's
    by whether the wake-up ``serves`` it)."""
    await manager.register_worker(env.db, worker_id, hostname="elsewhere", pid=1, now=utcnow())


async def test_a_notify_carries_its_senders_origin(pg_env: Env) -> None:
    """Workers tell their own process's NOTIFYs apart by this payload (``Worker.on_notify``)."""
    await _register(pg_env, "wrk_elsewhere")
    async with _notified(pg_env) as payloads:
        wakeup = make_wakeup(Settings(**pg_env.base), pg_env.db)
        try:
            wakeup.events_committed()
            assert await asyncio.wait_for(payloads.get(), timeout=5) == wakeup.origin
        finally:
            await wakeup.close()


async def test_a_postgres_wakeup_notifies_only_while_a_worker_elsewhere_is_registered(
    pg_env: Env,
) -> None:
    """No worker at all, or only the one it wakes in process: its commits send no NOTIFY (a
    statement a batch of POSTs, for nobody). NOTIFYs arrive in commit order, so the first
    one heard after those commits being the later wake-up's says the earlier sent none."""
    settings = Settings(**pg_env.base)
    async with _notified(pg_env) as payloads:
        alone = make_wakeup(settings, pg_env.db)
        alone.events_committed()
        await alone.close()  # waits for its look (and a NOTIFY, were one sent)
        await _register(pg_env, "wrk_in_process")
        beside_its_worker = make_wakeup(settings, pg_env.db)
        beside_its_worker.serves("wrk_in_process")
        beside_its_worker.events_committed()
        await beside_its_worker.close()
        told = make_wakeup(settings, pg_env.db)  # "wrk_in_process" is another process's to it
        try:
            told.events_committed()
            assert await asyncio.wait_for(payloads.get(), timeout=5) == told.origin
        finally:
            await told.close()


async def _woken(event: asyncio.Event) -> bool:
    try:
        await asyncio.wait_for(event.wait(), timeout=2)
    except TimeoutError:
        return False
    return True


async def test_a_sqlite_wakeup_reaches_the_worker_of_another_process(tmp_path: Path) -> None:
    """Two ``SocketWakeup``s on one database file are two processes' (each has its own socket
    in the folder beside the database): a commit in one wakes a worker of the other."""
    database = tmp_path / "hookline.db"
    receiving, sending = SocketWakeup(database), SocketWakeup(database)
    try:
        woken = receiving.subscribe()
        receiving.receive_from_other_processes()
        sending.events_committed()
        assert await _woken(woken)
        woken.clear()
        sending.events_committed()  # and again: the receiver drained its socket
        assert await _woken(woken)
    finally:
        await sending.close()
        await receiving.close()


async def test_a_sqlite_wakeup_says_no_scheduler_sleeps_beside_workers_of_other_processes(
    tmp_path: Path,
) -> None:
    """A batch is held open for the round of a sleeping scheduler (``scheduler_asleep``) only
    while no other process's worker is on the database: their writers would wait at the
    turnstile for as long as it is held (``serve --workers N``)."""
    database = tmp_path / "hookline.db"
    ours, theirs = SocketWakeup(database), SocketWakeup(database)
    try:
        sleeper = ours.subscribe()
        ours.receive_from_other_processes()
        assert not ours.scheduler_asleep()  # awake
        with ours.asleep(sleeper):
            assert ours.scheduler_asleep()
            sleeper.set()
            assert not ours.scheduler_asleep()  # woken already: nothing to hold a batch for
        sleeper.clear()
        theirs.receive_from_other_processes()
        with ours.asleep(sleeper):
            assert not ours.scheduler_asleep()
    finally:
        await theirs.close()
        await ours.close()


async def test_a_sqlite_wakeup_forgets_the_socket_of_a_dead_worker(tmp_path: Path) -> None:
    database = tmp_path / "hookline.db"
    folder = tmp_path / "hookline.db-wakeup"
    folder.mkdir()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dead.bind(str(folder / "1-dead"))
    dead.close()  # a killed process leaves its socket file behind
    sending = SocketWakeup(database)
    try:
        sending.events_committed()

        async def stale_socket_left() -> bool:
            return (folder / "1-dead").exists()

        await eventually(stale_socket_left, lambda left: not left, within=2)
    finally:
        await sending.close()


async def test_a_sqlite_wakeup_works_in_a_folder_too_deep_for_a_socket_path(
    tmp_path: Path,
) -> None:
    """sun_path holds 107 bytes; a deeper database folder is reached through /proc/self/fd."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    receiving, sending = SocketWakeup(deep / "hookline.db"), SocketWakeup(deep / "hookline.db")
    try:
        woken = receiving.subscribe()
        receiving.receive_from_other_processes()
        sending.events_committed()
        assert await _woken(woken)
    finally:
        await sending.close()
        await receiving.close()
