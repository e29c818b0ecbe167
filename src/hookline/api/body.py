"""``BodyGuard``: reads request bodies up front (they are at most 64 KiB) and refuses deep JSON.

Why read the body here rather than let the framework do it: FastAPI turns any exception raised
while it reads the body into a 400, so ``RequestContext``'s streaming size limit would surface as
400 instead of 413 on a body sent without ``Content-Length``. Reading it in this middleware, inside
``RequestContext`` and outside FastAPI, keeps that refusal a 413; the handler then reads the
buffered copy.

JSON nesting deeper than ``MAX_JSON_DEPTH`` is refused with 422 before anything parses it: deep
documents cost recursion in the parser and in pydantic, and orjson refuses to encode more than 254
levels, so a stored deep ``metadata`` would make every later read of it fail.
"""

from __future__ import annotations

import re

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline.api.errors import error_response
from hookline.errors import ValidationFailed

MAX_JSON_DEPTH = 32
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# A JSON string (escapes included) or a bracket: brackets inside strings don't nest anything.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class ClientGone(Exception):
    """The client disconnected before sending its whole body."""


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields ``body`` once, then defers to the real one (disconnects)."""
    pending = True

    async def replay() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def json_too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    # Counting brackets is C-speed; most bodies can't nest past the limit and stop here.
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for match in _TOKENS.finditer(body):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"]", b"}"):
            depth -= 1
    return False


def _is_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            media = value.split(b";")[0].strip().lower()
            return bool(media == b"application/json" or media.endswith(b"+json"))
    return False


class BodyGuard:
    def __init__(self, app: ASGIApp, *, max_json_depth: int = MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_json_depth = max_json_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(receive)
        except ClientGone:
            return  # nobody is left to answer
        if _is_json(scope) and json_too_deep(body, self.max_json_depth):
            error = ValidationFailed.for_field(
                "body", f"JSON nesting is deeper than {self.max_json_depth} levels"
            )
            await error_response(Request(scope), error)(scope, receive, send)
            return
        await self.app(scope, replay_body(body, receive), send)
