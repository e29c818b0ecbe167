"""The request head limit, and the HTTP protocol ``hookline serve`` runs.

A request line plus headers over ``MAX_HEAD_BYTES`` is refused with 431 ``headers_too_large``,
wherever it is noticed:

* a complete head (however it arrived: one socket read of up to 256 KiB, or many) reaches the
  app, and ``api.front.FrontDoor`` measures it with :func:`head_bytes` before anything
  else runs;
* a head still incomplete past the limit never reaches the app: httptools buffers a head without
  any bound of its own, so :class:`BoundedHttpToolsProtocol` counts the bytes received while a
  head is incomplete and refuses at the limit (at most one socket read is held beyond it).

Malformed HTTP is answered by the protocol too, since the app never sees it: 400 ``bad_request``.
Both answers are the contract's error body with a fresh request id, also sent as ``X-Request-Id``
and written to the access log.

The protocol also carries the HTTP side of a graceful stop (stopping.py). uvicorn's own
``shutdown`` closes every idle keep-alive connection at once, dropping unread a request its
client had just written. Here, a connection open at the stop (or accepted during it) drains:

* every request whose head completes from then on is answered in full with
  ``Connection: close`` (as is a request in flight when the stop began), and the connection
  closes after that answer;
* a connection with no request under way is closed once it has stayed so for
  ``stopping.DRAIN_SECONDS`` with no byte waiting unread in the kernel, so the close never
  discards a request already received, and never waits for the whole grace.

The protocol is uvicorn's httptools one (h11 has a bound built in but measured about 5x slower,
and it lets a complete head of any size through too). Subclassing it is the one place hookline
relies on uvicorn internals: the parser callbacks, ``send_400_response``, which uvicorn's
``data_received`` calls on a parser error, and for the stop ``shutdown`` (which uvicorn's server
calls on each connection), the current request's ``cycle`` with its ``keep_alive`` and
``response_complete``, and ``pipeline``. pyproject.toml pins uvicorn to the versions this was
checked on, and tests/api/test_protocol.py fails loudly if those hooks change.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import sys
import termios
from http import HTTPStatus

import orjson
from starlette.types import Scope
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from hookline.errors import (
    ApiError,
    BadRequest,
    HeadersTooLarge,
    ServiceUnavailable,
    error_body,
)
from hookline.ids import request_id
from hookline.stopping import DRAIN_SECONDS, stop_requested

MAX_HEAD_BYTES = 16 * 1024
# Bytes of a head that the scope does not carry: "GET" SP target SP "HTTP/1.1" CRLF ... CRLF.
_REQUEST_LINE_FRAMING = len(b"  HTTP/1.1\r\n") + len(b"\r\n")
_HEADER_FRAMING = len(b": \r\n")

access_log = logging.getLogger("hookline.access")


def head_bytes(scope: Scope) -> int:
    """The size of the request's head as sent on the wire (canonical spacing)."""
    size = _REQUEST_LINE_FRAMING + len(scope["method"]) + len(scope.get("raw_path") or b"")
    if scope.get("query_string"):
        size += 1 + len(scope["query_string"])
    for name, value in scope["headers"]:
        size += len(name) + len(value) + _HEADER_FRAMING
    return size


def head_too_large() -> HeadersTooLarge:
    return HeadersTooLarge(
        f"The request line and headers together are larger than {MAX_HEAD_BYTES // 1024} KiB."
    )


def refusal(error: ApiError, request_id_: str) -> bytes:
    """A whole HTTP/1.1 response carrying ``error``, closing the connection."""
    body = orjson.dumps(error_body(error.code, error.message, request_id_))
    reason = HTTPStatus(error.status_code).phrase.encode()
    extra = b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in error.headers.items())
    head = (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"x-request-id: %s\r\n%sconnection: close\r\n\r\n"
        % (error.status_code, reason, len(body), request_id_.encode(), extra)
    )
    return head + body


STOPPED_MID_REQUEST = (
    "The server stopped before this request had arrived whole; nothing was done. "
    "Send it again on a new connection."
)
PARSER_REFUSED = "request refused by the HTTP parser"
UNREAD_RECHECK_SECONDS = 0.05
"""How soon a draining connection with bytes still unread is looked at again."""


def unread_bytes(transport: asyncio.BaseTransport) -> int:
    """Bytes the kernel has received on the connection that the loop has not read yet."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        count = fcntl.ioctl(sock.fileno(), termios.FIONREAD, bytes(4))
    except (OSError, ValueError):  # closed under us: nothing more can be read
        return 0
    return int.from_bytes(count, sys.byteorder, signed=True)


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    _head_bytes = 0
    _in_head = True
    _draining = False
    _closing: tuple[RequestResponseCycle, bool] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if stop_requested():  # accepted during the stop, after uvicorn's round of shutdowns
            self.shutdown()

    def shutdown(self) -> None:
        """The stop: answer what is under way or comes within the drain window, closing."""
        if self._draining:
            return
        self._draining = True
        if self.cycle is not None and not self.cycle.response_complete:
            self._close_after(self.cycle)
        self.loop.call_later(DRAIN_SECONDS, self._close_when_idle)
        grace = self.config.timeout_graceful_shutdown
        if grace is not None:  # before uvicorn's own deadline, which starts after this call
            self.loop.call_later(grace, self._refuse_if_incomplete)

    def _close_after(self, cycle: RequestResponseCycle) -> None:
        """``cycle``'s answer carries ``Connection: close`` and ends the connection. It is the
        newest request parsed: one marked before it, pipelined ahead of it and not answered
        yet, gets its own keep-alive back, so that both are answered."""
        if self._closing is not None:
            earlier, its_keep_alive = self._closing
            if not earlier.response_started:
                earlier.keep_alive = its_keep_alive
        self._closing = (cycle, cycle.keep_alive)
        cycle.keep_alive = False

    def _request_under_way(self) -> bool:
        answering = self.cycle is not None and not self.cycle.response_complete
        head_started = self._in_head and self._head_bytes > 0
        return answering or head_started or bool(self.pipeline)

    def _close_when_idle(self) -> None:
        if self.transport.is_closing() or self._request_under_way():
            return  # its answer closes the connection, or the grace does
        if unread_bytes(self.transport):
            # A request arrived; the loop delivers it next.
            self.loop.call_later(UNREAD_RECHECK_SECONDS, self._close_when_idle)
            return
        self.transport.close()

    def _refuse_if_incomplete(self) -> None:
        """At the end of the grace, a request still arriving (its head or body incomplete)
        has done nothing yet: it is refused with 503 rather than cut off unanswered."""
        if self.transport.is_closing():
            return
        receiving_body = self.cycle is not None and self.cycle.more_body
        head_started = self._in_head and self._head_bytes > 0
        if (receiving_body and not self.cycle.response_started) or head_started:
            self._refuse(ServiceUnavailable(STOPPED_MID_REQUEST), "request refused: stopped")

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
            self._refuse(head_too_large(), PARSER_REFUSED)

    def on_headers_complete(self) -> None:
        self._in_head = False
        previous = self.cycle
        super().on_headers_complete()
        if self._draining and self.cycle is not previous:
            self._close_after(self.cycle)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        # The next request on this connection starts its own count.
        self._in_head = True
        self._head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        # uvicorn's answer to a parser error (``msg`` is its generic text, not the cause).
        self._refuse(BadRequest(), PARSER_REFUSED)

    def _refuse(self, error: ApiError, why: str) -> None:
        refused_id = request_id()
        self.transport.write(refusal(error, refused_id))
        self.transport.close()
        access_log.info(
            why,
            extra={"request_id": refused_id, "status": error.status_code, "code": error.code},
        )
