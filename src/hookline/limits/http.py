"""The HTTP protocol ``hookline serve`` runs: uvicorn's httptools with a bound on the request head.

httptools buffers a request line and headers without any limit, so one client could make the
process hold gigabytes. This subclass counts the bytes received while a request head is still
incomplete and, past ``MAX_HEAD_BYTES``, answers 400 in the contract's error body and closes the
connection. (uvicorn's h11 protocol has such a bound built in, but measured about 5x slower here.)
The check runs after each chunk is parsed, so at most one socket read (<= 256 KiB) is buffered
beyond the limit. Malformed HTTP gets the same contract-shaped 400 instead of uvicorn's text.
"""

from __future__ import annotations

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hookline.errors import error_body

MAX_HEAD_BYTES = 16 * 1024
BAD_REQUEST_CODE = "bad_request"
_MESSAGE = f"The request is not valid HTTP/1.1, or its headers exceed {MAX_HEAD_BYTES // 1024} KiB."


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    _head_bytes = 0
    _in_head = True

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
            self.send_400_response(_MESSAGE)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        # The next request on this connection starts its own count.
        self._in_head = True
        self._head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        body = orjson.dumps(error_body(BAD_REQUEST_CODE, _MESSAGE, ""))
        head = (
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
        )
        self.transport.write(head + body)
        self.transport.close()
