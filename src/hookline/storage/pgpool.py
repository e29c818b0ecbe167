"""The PostgreSQL connections of one process: a small pool, first come, first served.

Not asyncpg's own pool, which costs a proxy object per acquisition and a task per release, and
whose queue is not fair: a connection released while callers wait goes to whichever asks next,
and a waiter woken for it but beaten to it waits again at the back. An interleaved A/B of the
API on PostgreSQL measured asyncpg's pool (with its public ``reset`` hook as a no-op) costlier
per request than this one (docs/performance.md, "Storage"); ``tests/storage/test_connector.py``
holds the order.

Here a released connection goes straight to the longest-waiting caller, or back to the idle
list when nobody waits. A connection is given back healthy unless it is closed, still inside a
transaction, its holder was interrupted (cancelled) in the middle of using it, or asyncpg's
protocol failed on it (``asyncpg.InternalClientError``); an unhealthy one is terminated and its
place opened anew for the next caller. An idle connection found closed when it is asked for is
dropped the same way, never handed out.

What a PostgreSQL restart does to the idle connections: each backend sends its FATAL
("terminating connection due to administrator command") and exits. asyncpg, reading an error
while no operation is in progress, puts the connection's protocol in its error-consuming state,
and only when the socket's end arrives, a turn of the loop or tens of milliseconds later, is the
connection closed. In between it is not ``is_closed()``, and the next statement on it fails in
asyncpg itself: "cannot switch to state 12; another operation (2) is in progress" (a BEGIN: state
15). Such a connection is never handed on (it was, and failed every caller until its socket
closed), and the failure reaches its holder as ``ConnectionBroken``, a ``ConnectionError``: a 503
(``storage.outage``), as for every statement the outage costs, not a 500.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg

Setup = Callable[[asyncpg.Connection], Awaitable[None]]


class PoolClosed(ConnectionError):
    """The pool was closed while a caller waited for a connection."""


class ConnectionBroken(ConnectionError):
    """asyncpg's protocol failed on a connection (the server ended it and its socket is not
    closed yet): the connection is dropped; the driver's error is the ``__cause__``."""


class FairPool:
    def __init__(self, dsn: str, size: int, *, setup: Setup, timeout: float) -> None:
        self._dsn = dsn
        self._size = size
        self._setup = setup
        self._timeout = timeout
        self._idle: list[asyncpg.Connection] = []
        self._opened = 0
        """Connections open, in use or being opened: never more than ``size``."""
        self._waiting: collections.deque[asyncio.Future[asyncpg.Connection | None]] = (
            collections.deque()
        )
        self._closed = False

    @contextlib.asynccontextmanager
    async def connection(self, *, first: bool = False) -> AsyncIterator[asyncpg.Connection]:
        raw = await self.acquire(first=first)
        try:
            yield raw
        except asyncpg.InternalClientError as exc:
            self.release(raw, interrupted=True)
            raise ConnectionBroken(f"the connection to PostgreSQL broke: {exc}") from exc
        except Exception:
            self.release(raw)  # an SQL error or the caller's own: the connection is fine
            raise
        except BaseException:
            self.release(raw, interrupted=True)
            raise
        self.release(raw)

    async def acquire(self, *, first: bool = False) -> asyncpg.Connection:
        """A connection; ``first``: ahead of every caller waiting (one that serves many)."""
        if self._closed:
            raise PoolClosed("the connection pool is closed")
        while self._idle:  # nobody waits while a connection is idle
            raw = self._idle.pop()
            if not raw.is_closed():
                return raw
            self._opened -= 1  # lost while idle (a restarted server): its place opens anew
        if self._opened < self._size:
            self._opened += 1
            return await self._open_in_place()
        waiter: asyncio.Future[asyncpg.Connection | None]
        waiter = asyncio.get_running_loop().create_future()
        if first:
            self._waiting.appendleft(waiter)
        else:
            self._waiting.append(waiter)
        try:
            raw = await waiter
        except asyncio.CancelledError:
            self._give_up(waiter)
            raise
        # None: the place of a connection that was dropped, kept for this caller to open.
        return raw if raw is not None else await self._open_in_place()

    def _give_up(self, waiter: asyncio.Future[asyncpg.Connection | None]) -> None:
        """A cancelled waiter: what it was handed as it was cancelled goes to the next."""
        if not waiter.done() or waiter.cancelled():
            with contextlib.suppress(ValueError):
                self._waiting.remove(waiter)
            return
        raw = waiter.result()
        if raw is None:
            self._free_place()
        else:
            self._hand_on(raw)

    async def _open_in_place(self) -> asyncpg.Connection:
        """Open a connection in a place already counted in ``_opened``."""
        try:
            raw = await asyncpg.connect(self._dsn, timeout=self._timeout)
        except BaseException:
            self._free_place()
            raise
        try:
            await self._setup(raw)
        except BaseException:
            raw.terminate()
            self._free_place()
            raise
        return raw

    def release(self, raw: asyncpg.Connection, *, interrupted: bool = False) -> None:
        """Give ``raw`` back; ``interrupted``: its holder could not finish using it."""
        if interrupted or self._closed or raw.is_closed() or raw.is_in_transaction():
            if not raw.is_closed():
                raw.terminate()
            self._free_place()
            return
        self._hand_on(raw)

    def _free_place(self) -> None:
        """A connection is gone: the longest-waiting caller, if any, opens one in its place."""
        self._opened -= 1
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                self._opened += 1
                waiter.set_result(None)
                return

    def _hand_on(self, raw: asyncpg.Connection) -> None:
        """Give ``raw`` to the longest-waiting caller, or keep it idle if none waits."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(raw)
                return
        self._idle.append(raw)

    async def close(self) -> None:
        """Close the idle connections; one in use is closed when it is given back."""
        self._closed = True
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_exception(PoolClosed("the connection pool is closed"))
        idle, self._idle = self._idle, []
        self._opened -= len(idle)
        for raw in idle:
            with contextlib.suppress(Exception):
                await raw.close(timeout=2)
