"""A real HTTP webhook receiver on 127.0.0.1, served by aiohttp in the test's event loop.

    async with Receiver() as r:
        r.script([500, 500, 200])          # then back to the default reply (204)
        ... point a webhook at r.url ...
        requests = await r.wait_for(3, timeout=10)

Every request to any path is recorded (:class:`RecordedRequest`) as soon as its body is read,
before any configured hang, so ``wait_for`` also sees requests that are still being answered.
Behaviour can be changed at any time: :meth:`Receiver.respond`, :meth:`Receiver.redirect`,
:meth:`Receiver.hang`, :meth:`Receiver.script`, :meth:`Receiver.reset`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Reply:
    """How the receiver answers one request: ``status`` with ``headers`` and ``body``, after
    waiting ``delay`` seconds (a hang; cut short when the receiver closes)."""

    status: int = 204
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    """Lower-case names; repeated headers joined with ``", "``."""
    header_items: list[tuple[str, str]]
    """Every header line in order, names lower-cased."""
    body: bytes
    received_at: float
    """``time.monotonic()`` when the body had been read."""
    reply: Reply
    """What the receiver answered (or is about to answer)."""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """An HTTP server on 127.0.0.1 recording every request; an async context manager."""

    def __init__(
        self, path: str = "/hook", *, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None
    ) -> None:
        """``tls``: serve https with this server context (e.g. one that requires a client
        certificate, ``tests.support.identity``)."""
        self.path = path
        self.host = host
        self.tls = tls
        self.port = 0
        self.requests: list[RecordedRequest] = []
        self.default = Reply()
        self._script: deque[Reply] = deque()
        self._condition: asyncio.Condition | None = None
        self._closing: asyncio.Event | None = None
        self._runner: web.AppRunner | None = None

    # -- addresses -----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/hook`` (https with ``tls``): the URL to subscribe."""
        return self.base_url + self.path

    def url_for(self, path: str) -> str:
        return self.base_url + path

    # -- behaviour -----------------------------------------------------------------------

    def respond(
        self,
        status: int = 204,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | str = b"",
        delay: float = 0.0,
    ) -> None:
        """Answer every later request (once any script is used up) like this."""
        self.default = _reply(status, headers, body, delay)

    def redirect(self, location: str, status: int = 302) -> None:
        """Answer with a redirect to ``location`` (a webhook sender must not follow it)."""
        self.default = Reply(status=status, headers={"Location": location})

    def hang(self, seconds: float) -> None:
        """Wait ``seconds`` before answering (keeping the default status and headers)."""
        self.default = Reply(
            status=self.default.status,
            headers=self.default.headers,
            body=self.default.body,
            delay=seconds,
        )

    def script(self, replies: Iterable[int | Reply]) -> None:
        """Answer the next requests with these, in order (replacing any unused script), then
        fall back to the default reply. An ``int`` is a status with no headers and no body."""
        self._script = deque(r if isinstance(r, Reply) else Reply(status=r) for r in replies)

    def reset(self) -> None:
        """Back to plain 204 answers; recorded requests are kept (see :meth:`clear`)."""
        self.default = Reply()
        self._script.clear()

    def clear(self) -> None:
        self.requests.clear()

    # -- waiting -------------------------------------------------------------------------

    async def wait_for(
        self,
        count: int,
        timeout: float = 10.0,  # noqa: ASYNC109 - a deadline that fails the test, by design
    ) -> list[RecordedRequest]:
        """Wait until at least ``count`` requests arrived; returns them all (a copy).

        Raises :class:`AssertionError` (with what did arrive) after ``timeout`` seconds.
        """
        return await self.wait_until(
            lambda requests: len(requests) >= count,
            timeout,
            description=f"{count} request(s)",
        )

    async def wait_until(
        self,
        predicate: Callable[[list[RecordedRequest]], bool],
        timeout: float = 10.0,  # noqa: ASYNC109 - a deadline that fails the test, by design
        *,
        description: str = "condition",
    ) -> list[RecordedRequest]:
        """Wait until ``predicate(requests)`` holds, re-checked on each new request."""
        condition = self._require_condition()
        async with condition:
            try:
                await asyncio.wait_for(
                    condition.wait_for(lambda: predicate(self.requests)), timeout
                )
            except TimeoutError:
                seen = [f"{r.method} {r.path} -> {r.reply.status}" for r in self.requests]
                raise AssertionError(
                    f"receiver: waited {timeout}s for {description}; got {len(seen)}: {seen}"
                ) from None
            return list(self.requests)

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Receiver:
        self._condition = asyncio.Condition()
        self._closing = asyncio.Event()
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0
        )
        await runner.setup()
        self._runner = runner
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, 0))
            self.port = sock.getsockname()[1]
            await web.SockSite(runner, sock, ssl_context=self.tls).start()
        except BaseException:
            sock.close()
            await runner.cleanup()
            self._runner = None
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- internals -----------------------------------------------------------------------

    def _require_condition(self) -> asyncio.Condition:
        if self._condition is None:
            raise RuntimeError("use the Receiver inside 'async with Receiver() as r:'")
        return self._condition

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        reply = self._script.popleft() if self._script else self.default
        headers: dict[str, str] = {}
        for name, value in request.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        recorded = RecordedRequest(
            method=request.method,
            path=request.path,
            query=request.query_string,
            headers=headers,
            header_items=[(k.lower(), v) for k, v in request.headers.items()],
            body=body,
            received_at=time.monotonic(),
            reply=reply,
        )
        condition = self._require_condition()
        async with condition:
            self.requests.append(recorded)
            condition.notify_all()
        if reply.delay > 0 and self._closing is not None:
            try:
                await asyncio.wait_for(self._closing.wait(), reply.delay)
            except TimeoutError:
                pass
        return web.Response(status=reply.status, headers=dict(reply.headers), body=reply.body)


def _reply(
    status: int, headers: Mapping[str, str] | None, body: bytes | str, delay: float
) -> Reply:
    data = body.encode() if isinstance(body, str) else body
    return Reply(status=status, headers=dict(headers or {}), body=data, delay=delay)
