"""How ``hookline serve`` stops on SIGTERM or SIGINT (docs/operations.md, "Stopping").

The first signal starts the stop and its clock: uvicorn stops accepting, every request already
received or arriving in the drain window on an open connection is answered with
``Connection: close`` (``api.protocol.BoundedHttpToolsProtocol``), then the app's lifespan stops
the delivery worker with what is left of ``HOOKLINE_STOP_GRACE_SECONDS``. Past the grace, what is
left is cancelled and the process still exits 0. A second signal changes nothing: the grace
already bounds the stop, and cutting it short would drop answers.

A signal that comes before uvicorn has installed its handlers (while the app is built, the
database migrated, the processes forked) is recorded by :func:`signals_caught`'s handler and
honoured as soon as the server has started.
"""

from __future__ import annotations

import functools
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uvicorn

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

DRAIN_SECONDS = 1.0
"""How long a connection open at the stop may still bring a request (answered with
``Connection: close``) before it is closed as idle: covers a request already on its way."""

_began: float | None = None


def request_stop() -> None:
    """Start the stop's clock (once: later signals keep the first one's)."""
    global _began
    if _began is None:
        _began = time.monotonic()


def stop_requested() -> bool:
    return _began is not None


def seconds_left(grace: float) -> float | None:
    """What is left of ``grace`` since the stop began; None while no stop was requested."""
    if _began is None:
        return None
    return max(0.0, _began + grace - time.monotonic())


def _on_stop_signal(_signum: int, _frame: FrameType | None) -> None:
    request_stop()


@contextmanager
def signals_caught() -> Iterator[None]:
    """SIGTERM and SIGINT start the stop instead of killing the process, until the block ends
    (then the previous handlers are back). Enter it first thing in a long-running command."""
    previous = {sig: signal.signal(sig, _on_stop_signal) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def catch_signals() -> None:
    """:func:`signals_caught` for the rest of the process (a forked server process)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_stop_signal)


@functools.cache
def graceful_server_class() -> type[uvicorn.Server]:
    """uvicorn's server, stopped gracefully by any number of SIGTERMs and SIGINTs (built on
    first use: the other commands start without importing uvicorn).

    uvicorn takes a second SIGINT as "force exit" (no waiting for requests, no lifespan
    shutdown); Ctrl-C also reaches every process of ``serve --workers N`` right before the
    supervisor's SIGTERM, so that would cut in-flight requests short.
    """
    import uvicorn

    class GracefulServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            request_stop()
            super().handle_exit(signal.SIGTERM, frame)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if stop_requested():  # signalled before uvicorn's handlers were in place
                self.should_exit = True

    return GracefulServer
