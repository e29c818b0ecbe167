"""Pure ASGI middleware (cheaper than BaseHTTPMiddleware on the hot path).

``RequestContext``: request id (a sane client ``X-Request-Id`` is echoed), the body size limit
enforced while the body streams in (a huge body is refused at the limit, never buffered), and one
structured access-log line per request. It never logs a header value, query string or body.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline.errors import PayloadTooLarge, error_body

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


class RequestContext:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        client_id = _header(scope, b"x-request-id")
        request_id = client_id if client_id and _SANE_REQUEST_ID.match(client_id) else None
        request_id = request_id or f"req_{uuid.uuid4().hex}"
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        status_holder = [500]
        response_started = [False]
        header_value = request_id.encode()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_started[0] = True
                status_holder[0] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", header_value)]
            await send(message)

        try:
            if self._declared_too_large(scope):
                await self._refuse_too_large(send_with_id, request_id)
            else:
                await self.app(scope, self._limited(receive), send_with_id)
        except _BodyTooLarge:
            if not response_started[0]:
                await self._refuse_too_large(send_with_id, request_id)
        finally:
            self._log(scope, state, status_holder[0], started)

    def _declared_too_large(self, scope: Scope) -> bool:
        length = _header(scope, b"content-length")
        return length is not None and length.isdigit() and int(length) > self.max_body_bytes

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

    async def _refuse_too_large(self, send: Send, request_id: str) -> None:
        error = PayloadTooLarge(f"The request body is larger than {self.max_body_bytes} bytes.")
        body = orjson.dumps(error_body(error.code, error.message, request_id))
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _log(scope: Scope, state: dict[str, Any], status: int, started: float) -> None:
        if not access_log.isEnabledFor(logging.INFO):
            return
        access_log.info(
            "request",
            extra={
                "request_id": state.get("request_id"),
                "account_id": state.get("account_id"),
                "method": scope["method"],
                "path": scope["path"],
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
            },
        )
