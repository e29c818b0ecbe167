"""Pure ASGI middleware (cheaper than BaseHTTPMiddleware on the hot path).

``RequestContext``: request id (a sane client ``X-Request-Id`` is echoed), the request head limit
(431, ``limits.http``), the body size limit enforced while the body streams in (a huge body is
refused at the limit, never buffered), the answer to any exception from below (so the connection
stays usable after a 500 or 503), and one structured access-log line per request. It never logs a
header value, query string or body.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline.api.errors import error_for_unexpected
from hookline.errors import ApiError, BadRequest, PayloadTooLarge, error_body
from hookline.ids import request_id as new_request_id
from hookline.limits.http import MAX_HEAD_BYTES, head_bytes, head_too_large
from hookline.logs import log_access

access_log = logging.getLogger("hookline.access")
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


class _BodyTooLarge(Exception):
    pass


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _count(scope: Scope, name: bytes) -> int:
    count = 0
    for key, _ in scope["headers"]:  # a plain loop: 4x faster than sum() over a generator
        if key == name:
            count += 1
    return count


def request_id_for(client_id: str | None) -> str:
    """The client's ``X-Request-Id`` if it is sane, else a new id."""
    if client_id and _SANE_REQUEST_ID.match(client_id):
        return client_id
    return new_request_id()


def error_message(
    error: ApiError, request_id: str, *, close: bool
) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body with which this layer answers ``error`` itself (a refusal before
    the app, or an exception nothing below answered), before ``X-Request-Id`` is added."""
    body = orjson.dumps(error_body(error.code, error.message, request_id, error.details))
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((name.lower().encode(), value.encode()) for name, value in error.headers.items()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    return headers, body


def log_request(scope: Scope, state: dict[str, Any], status: int, started: float) -> None:
    """The access-log line of a request: never a header value, query string or body."""
    if not access_log.isEnabledFor(logging.INFO):
        return
    log_access(
        access_log,
        "request",
        {
            "request_id": state.get("request_id"),
            "account_id": state.get("account_id"),
            "method": scope["method"],
            "path": scope["path"],
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        },
    )


def refusal_of(scope: Scope, max_body_bytes: int) -> ApiError | None:
    """What to refuse before the app runs: a head over 16 KiB, an HTTP/1.1 request without
    exactly one Host (RFC 9112 section 3.2; the only malformed head httptools lets through),
    a body declared too large."""
    if head_bytes(scope) > MAX_HEAD_BYTES:
        return head_too_large()
    if scope.get("http_version") == "1.1" and _count(scope, b"host") != 1:
        return BadRequest("An HTTP/1.1 request must carry exactly one Host header.")
    length = _header(scope, b"content-length")
    if length is not None and length.isdigit() and int(length) > max_body_bytes:
        return body_too_large(max_body_bytes)
    return None


def body_too_large(max_body_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The request body is larger than {max_body_bytes} bytes.")


class RequestContext:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = request_id_for(_header(scope, b"x-request-id"))
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        status_holder = [500]
        progress = {"started": False, "complete": False}
        header_value = request_id.encode()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                progress["started"] = True
                status_holder[0] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", header_value)]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                progress["complete"] = True
            await send(message)

        try:
            refusal = refusal_of(scope, self.max_body_bytes)
            if refusal is not None:
                await self._send_error(send_with_id, refusal, request_id, close=True)
            else:
                await self.app(scope, self._limited(receive), send_with_id)
        except _BodyTooLarge:
            if not progress["started"]:
                await self._send_error(
                    send_with_id, body_too_large(self.max_body_bytes), request_id, close=True
                )
        except Exception as exc:
            if progress["started"] and not progress["complete"]:
                raise  # half a response: only closing the connection can tell the client
            error = error_for_unexpected(exc, scope["method"], scope["path"])
            if not progress["started"]:
                # A complete answer, so the kept-alive connection stays usable for the next one.
                await self._send_error(send_with_id, error, request_id, close=False)
        finally:
            log_request(scope, state, status_holder[0], started)

    def _limited(self, receive: Receive) -> Receive:
        received = 0
        limit = self.max_body_bytes

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _BodyTooLarge
            return message

        return limited_receive

    @staticmethod
    async def _send_error(send: Send, error: ApiError, request_id: str, *, close: bool) -> None:
        headers, body = error_message(error, request_id, close=close)
        await send({"type": "http.response.start", "status": error.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": body})
