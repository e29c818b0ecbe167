"""What ``hookline listen`` runs: the event stream read and each event forwarded, signed.

Apart from the command's declaration (``hookline.listen``) so that every other command starts
without importing aiohttp (~0.3-0.5 s of each CLI run).

The first connection checks the key and the server: if the API refuses the stream or cannot be
reached, the command stops with one line. Later, a lost connection is retried with growing
delays (doubling up to ``RETRY_MAX_SECONDS``), each retry naming the URL and why it failed; a
refusal then (the key was revoked) stops it too. SIGINT and SIGTERM stop it at any point, the
forwarding cancelled where it is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp
import orjson

from hookline.delivery.signing import build_headers

RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0
FORWARD_TIMEOUT_SECONDS = 15.0
# Longer than the server's longest silence between heartbeats (15 s).
READ_TIMEOUT_SECONDS = 60.0
CONNECT_TIMEOUT_SECONDS = 10.0
# After a stop signal, how long the cancelled forwarding may take to wind down.
STOP_GRACE_SECONDS = 5.0
# Answers that no retry can change: the key, its scopes or the request is wrong.
REFUSALS = frozenset({400, 401, 403, 404, 422})


@dataclass
class Message:
    id: str = ""
    event: str = ""
    data: str = ""


class Refused(Exception):
    """The API refused the stream: retrying cannot help."""


class Unavailable(Exception):
    """The API answered the stream with an error that may pass (429, 5xx)."""


RETRYABLE = (aiohttp.ClientError, TimeoutError, ConnectionError, Unavailable)


def retry_delays() -> Iterator[float]:
    """The waits before successive reconnections: doubling, capped."""
    delay = RETRY_FIRST_SECONDS
    while True:
        yield delay
        delay = min(delay * 2, RETRY_MAX_SECONDS)


async def run(args: argparse.Namespace, key: str, secret: str, announce: Callable[[], None]) -> int:
    """Forward until SIGINT or SIGTERM (0); 1 when the stream cannot start or is refused."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    work = asyncio.create_task(listen(args, key, secret, announce))
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({work, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if work.done():
        return work.result()
    # The stop does not depend on where the forwarding is (a read, a retry's wait, a POST).
    work.cancel()
    await asyncio.wait({work}, timeout=STOP_GRACE_SECONDS)
    return 0


class Stream:
    """``GET /v1/events/stream`` with the key, resumed after the last event forwarded."""

    def __init__(self, args: argparse.Namespace, key: str) -> None:
        self.url = args.api_url.rstrip("/") + "/v1/events/stream"
        self._params = {"types": args.events} if args.events else {}
        self._key = key
        self.last_id: str | None = None

    async def open(self, session: aiohttp.ClientSession) -> aiohttp.ClientResponse:
        headers = {"Authorization": f"Bearer {self._key}", "Accept": "text/event-stream"}
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
        response = await session.get(self.url, params=self._params, headers=headers)
        if response.status == 200:
            return response
        async with response:
            why = f"{response.status} {_error_message(await response.read())}"
        if response.status in REFUSALS:
            raise Refused(why)
        raise Unavailable(why)


async def listen(
    args: argparse.Namespace, key: str, secret: str, announce: Callable[[], None]
) -> int:
    stream = Stream(args, key)
    timeout = aiohttp.ClientTimeout(
        total=None, sock_connect=CONNECT_TIMEOUT_SECONDS, sock_read=READ_TIMEOUT_SECONDS
    )
    async with aiohttp.ClientSession(timeout=timeout) as session:
        try:
            response = await stream.open(session)
        except Refused as exc:
            return _fail(f"the API at {stream.url} refused the stream: {exc}")
        except RETRYABLE as exc:
            return _fail(
                f"cannot stream from {stream.url}: {_reason(exc)}. "
                "Is the server running, and --api-url right?"
            )
        announce()
        while True:
            why = await _forward_all(session, stream, response, args.forward_to, secret)
            opened = await _reconnect(session, stream, why)
            if opened is None:
                return 1
            response = opened


async def _forward_all(
    session: aiohttp.ClientSession,
    stream: Stream,
    response: aiohttp.ClientResponse,
    forward_to: str,
    secret: str,
) -> str:
    """Forward the response's events until it ends; why it ended."""
    try:
        async with response:
            async for message in _messages(response.content):
                await _forward(session, forward_to, secret, message)
                stream.last_id = message.id
    except RETRYABLE as exc:
        return _reason(exc)
    return "the server ended the stream"


async def _reconnect(
    session: aiohttp.ClientSession, stream: Stream, why: str
) -> aiohttp.ClientResponse | None:
    """Open the stream again, waiting longer after each failure; None if it is refused."""
    for delay in retry_delays():
        _note(f"connection to {stream.url} lost ({why}); retrying in {delay:g} s")
        await asyncio.sleep(delay)
        try:
            return await stream.open(session)
        except Refused as exc:
            _fail(f"the API at {stream.url} refused the stream: {exc}")
            return None
        except RETRYABLE as exc:
            why = _reason(exc)
    raise AssertionError("retry_delays never ends")


def _note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _fail(line: str) -> int:
    _note(f"hookline: {line}")
    return 1


def _error_message(body: bytes) -> str:
    """The contract's error message of an answer, on one line."""
    text = body.decode(errors="replace")
    with contextlib.suppress(ValueError, TypeError, KeyError):
        error = orjson.loads(body)["error"]
        text = f"{error['code']}: {error['message']}"
    return " ".join(text.split())[:300] or "no explanation"


def _reason(exc: BaseException) -> str:
    """Why a connection failed, in words (aiohttp's own say ``ssl:default`` for plain HTTP)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        error = exc.os_error
        if isinstance(error, socket.gaierror) or not error.errno:
            return error.strerror or str(error)
        return os.strerror(error.errno)
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the connection was cut"
    return str(exc) or type(exc).__name__


async def _messages(content: aiohttp.StreamReader) -> AsyncIterator[Message]:
    """Server-Sent Events messages; comment lines (heartbeats) are skipped."""
    message = Message()
    async for raw in content:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if message.id and message.data:
                yield message
            message = Message()
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "id":
            message.id = value
        elif field == "event":
            message.event = value
        elif field == "data":
            message.data = value if not message.data else message.data + "\n" + value


async def _forward(session: aiohttp.ClientSession, url: str, secret: str, message: Message) -> None:
    body = message.data.encode()
    headers = build_headers(message.id, int(time.time()), body, [secret])
    started = time.monotonic()
    try:
        async with session.post(
            url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=FORWARD_TIMEOUT_SECONDS),
        ) as response:
            await response.read()
            outcome = str(response.status)
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        outcome = f"error ({exc or type(exc).__name__})"
    elapsed = int((time.monotonic() - started) * 1000)
    now = datetime.now(UTC).strftime("%H:%M:%S")
    print(f"{now}  {message.event:<20} {message.id}  {outcome}  {elapsed} ms", flush=True)
