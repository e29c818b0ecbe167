"""Process-wide settings for the long-running commands (``hookline serve``, ``hookline worker``)."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Callable
from typing import Any

import uvloop

# CPython collects the young generation every 700 allocations by default. A request allocates
# thousands of short-lived containers, almost all freed by reference counting before any
# collection could matter, so the default threshold mostly pays for scanning the survivors of
# requests still in flight.
YOUNG_GENERATION_THRESHOLD = 20_000


def settle_heap() -> None:
    """Call once start-up has imported and built everything, just before serving.

    Freezing moves every object alive now (modules, classes, the app, compiled statements: about
    145,000 objects once ``hookline serve`` has started) out of the collector's reach. Without it,
    full collections under load walk them all with the event loop stopped (docs/performance.md).
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, middle, old)


class EagerAcceptLoop(uvloop.Loop):
    """uvloop's loop, except that a listening socket's pending connections are all accepted as
    soon as the loop accepts one of them.

    uvloop (libuv) accepts one connection per turn of the loop. A turn of a saturated server
    runs every request that is ready, so connections opened while it is busy queue in the
    kernel and the last of them waits one turn per connection ahead of it. asyncio's own loop
    accepts up to the backlog at once, but serves fewer requests per second.
    """

    async def create_server(  # type: ignore[override]  # uvloop's server is no asyncio.Server
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], *args: Any, **kwargs: Any
    ) -> asyncio.AbstractServer:
        listener = kwargs.get("sock")
        # Plain TCP only: a connection taken here skips the server's TLS (``ssl``), which
        # ``hookline serve`` never sets; should it ever, the loop's own accept keeps TLS.
        plain = kwargs.get("ssl") is None
        if plain and isinstance(listener, socket.socket) and listener.type == socket.SOCK_STREAM:
            listener.setblocking(False)
            protocol_factory = _AcceptTheRest(self, listener, protocol_factory)
        return await super().create_server(protocol_factory, *args, **kwargs)


class _AcceptTheRest:
    """A server's protocol factory that, each time the loop accepts a connection (and so asks
    it for a protocol), first takes every other connection waiting on the listener."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        listener: socket.socket,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
    ) -> None:
        self._loop = loop
        self._listener = listener
        self._protocol_factory = protocol_factory
        self._opening: set[asyncio.Task[None]] = set()

    def __call__(self) -> asyncio.BaseProtocol:
        for connection in self._waiting_connections():
            task = self._loop.create_task(self._serve(connection))
            self._opening.add(task)
            task.add_done_callback(self._opening.discard)
        return self._protocol_factory()

    def _waiting_connections(self) -> list[socket.socket]:
        accepted: list[socket.socket] = []
        while len(accepted) < MAX_ACCEPTED_AT_ONCE:
            try:
                connection, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                break  # none left
            except ConnectionAbortedError:
                continue  # reset by its client while queued
            except OSError:
                break  # out of descriptors and the like: the loop's own accept reports it
            accepted.append(connection)
        return accepted

    async def _serve(self, connection: socket.socket) -> None:
        connection.setblocking(False)
        try:  # (uvloop sets TCP_NODELAY on it, as on the connections it accepts itself)
            await self._loop.connect_accepted_socket(self._protocol_factory, connection)
        except OSError:
            connection.close()  # gone before it could be served


MAX_ACCEPTED_AT_ONCE = 1024
"""Bounds one drain of the listener, as asyncio's loop bounds its own by the backlog."""


def new_event_loop() -> asyncio.AbstractEventLoop:
    """``hookline serve``'s event loop (uvicorn's ``loop`` setting names this function)."""
    return EagerAcceptLoop()
