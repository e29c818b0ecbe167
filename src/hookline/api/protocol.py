"""The request head limit, and the HTTP protocol ``hookline serve`` runs.

A request line plus headers over ``MAX_HEAD_BYTES`` is refused with 431 ``headers_too_large``,
wherever it is noticed:

* a complete head (however it arrived: one socket read of up to 256 KiB, or many) reaches the
  app, and ``api.middleware.RequestContext`` measures it with :func:`head_bytes` before anything
  else runs;
* a head still incomplete past the limit never reaches the app: httptools buffers a head without
  any bound of its own, so :class:`BoundedHttpToolsProtocol` counts the bytes received while a
  head is incomplete and refuses at the limit (at most one socket read is held beyond it).

Malformed HTTP is answered by the protocol too, since the app never sees it: 400 ``bad_request``.
Both answers are the contract's error body with a fresh request id, also sent as ``X-Request-Id``
and written to the access log.

The protocol is uvicorn's httptools one (h11 has a bound built in but measured about 5x slower,
and it lets a complete head of any size through too). Subclassing it is the one place hookline
relies on uvicorn internals: the parser callbacks and ``send_400_response``, which uvicorn's
``data_received`` calls on a parser error. pyproject.toml pins uvicorn to the versions this was
checked on, and tests/api/test_protocol.py fails loudly if those hooks change.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

import orjson
from starlette.types import Scope
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hookline.errors import ApiError, BadRequest, HeadersTooLarge, error_body
from hookline.ids import request_id

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
    head = (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"x-request-id: %s\r\nconnection: close\r\n\r\n"
        % (error.status_code, reason, len(body), request_id_.encode())
    )
    return head + body


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    _head_bytes = 0
    _in_head = True

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
            self._refuse(head_too_large())

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        # The next request on this connection starts its own count.
        self._in_head = True
        self._head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        # uvicorn's answer to a parser error (``msg`` is its generic text, not the cause).
        self._refuse(BadRequest())

    def _refuse(self, error: ApiError) -> None:
        refused_id = request_id()
        self.transport.write(refusal(error, refused_id))
        self.transport.close()
        access_log.info(
            "request refused by the HTTP parser",
            extra={"request_id": refused_id, "status": error.status_code, "code": error.code},
        )
