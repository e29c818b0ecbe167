"""Request bodies: read whole (the front door reads them up front: they are at most 64 KiB),
replayed to whoever reads them next, and measured for JSON nesting.

JSON nesting deeper than ``MAX_JSON_DEPTH`` is refused with 422 before anything parses it: deep
documents cost recursion in the parser and in pydantic, and orjson refuses to encode more than 254
levels, so a stored deep ``metadata`` would make every later read of it fail.
"""

from __future__ import annotations

import re

from starlette.types import Message, Receive

MAX_JSON_DEPTH = 32
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
