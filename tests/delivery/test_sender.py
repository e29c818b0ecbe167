"""The sender's total timeout against real receivers on 127.0.0.1: hanging attempts are cut
at the configured timeout, each of many at once, a status that arrived in time is kept when
the body is cut, and a cancellation from outside (a stopping worker) stays a cancellation.
Guards for any change to how the timeout is armed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from hookline.delivery.retry import AttemptTimedOut
from hookline.delivery.sender import AttemptResult, Sender
from hookline.settings import Settings
from tests.support.receiver import Receiver

HEADERS = {"content-type": "application/json"}


def _sender(total: float) -> Sender:
    return Sender(Settings(allow_private_targets=True, delivery_total_timeout=total))


@asynccontextmanager
async def _raw_receiver(
    answer: Callable[[asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[str]:
    """A TCP server on 127.0.0.1 that reads a request's head and then runs ``answer``."""
    held: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.readuntil(b"\r\n\r\n")
        await answer(writer)

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def _timed_send(sender: Sender, url: str) -> tuple[float, AttemptResult]:
    started = time.monotonic()
    result = await sender.send(url, HEADERS, b"{}")
    return time.monotonic() - started, result


async def test_concurrent_hanging_attempts_are_each_cut_at_the_timeout() -> None:
    sender = _sender(0.3)
    await sender.start()
    try:
        async with Receiver() as receiver:
            receiver.hang(60)
            sent = [_timed_send(sender, receiver.url) for _ in range(20)]
            results = await asyncio.gather(*sent)
            # The sender still sends after cutting them.
            receiver.respond(204)
            _, ok = await _timed_send(sender, receiver.url)
    finally:
        await sender.close()
    for took, result in results:
        assert isinstance(result.error, AttemptTimedOut)
        assert 0.3 <= took < 0.8
    assert ok.status_code == 204


async def test_a_status_that_arrived_in_time_is_kept_when_the_body_is_cut() -> None:
    async def head_then_stall(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\n")
        writer.write(b"Content-Length: 100\r\n\r\npart")
        await writer.drain()
        await asyncio.sleep(60)

    sender = _sender(0.3)
    await sender.start()
    try:
        async with _raw_receiver(head_then_stall) as url:
            took, result = await _timed_send(sender, url)
    finally:
        await sender.close()
    assert result.status_code == 503 and result.error is None
    assert result.retry_after == "7"
    assert 0.3 <= took < 0.8


async def test_a_cancelled_attempt_stays_cancelled() -> None:
    """A stopping worker cancels its sends (``Worker._finish_sends``, ``kill``): that must not
    turn into a timed-out attempt."""
    sender = _sender(5.0)
    await sender.start()
    try:
        async with Receiver() as receiver:
            receiver.hang(60)
            task = asyncio.create_task(sender.send(receiver.url, HEADERS, b"{}"))
            await receiver.wait_for(1, timeout=5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    finally:
        await sender.close()
