"""HTTP/1.1 over a raw socket, for what no well-behaved client sends: oversized or malformed heads,
hostile ``Host`` headers, several requests on one kept-alive connection.

    with raw_connection(server.port) as conn:
        conn.send(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        answer = conn.response()   # status, headers (lower-case names), body
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson

TIMEOUT = 15.0


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


class ConnectionClosed(Exception):
    """The server closed (or reset) the connection before a whole response arrived."""


class RawConnection:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, method: str, path: str, headers: dict[str, str] | None = None) -> None:
        """Send a body-less request; ``Host: hookline.test`` unless ``headers`` names one."""
        fields = {"Host": "hookline.test", **(headers or {})}
        lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in fields.items()), "", ""]
        self.send("\r\n".join(lines).encode("latin-1"))

    def _fill(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError as exc:
            raise ConnectionClosed("reset by the server") from exc
        if not chunk:
            raise ConnectionClosed("closed by the server")
        self._buffer += chunk

    def response(self) -> RawResponse:
        """The next whole response (``Content-Length`` framed, as hookline always sends)."""
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
        head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self._buffer) < length:
            self._fill()
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        return RawResponse(int(status_line.split()[1]), headers, body)

    def closed_already(self) -> bool:
        """Whether the server has closed its side by now (without waiting): what a client that
        reuses a kept-alive connection checks before writing on it."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        if not readable:
            return False
        try:
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except ConnectionResetError:
            return True

    def closed_by_server(self) -> bool:
        """Whether the server has closed its side (waits up to the socket's timeout)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False


def json_request(method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """A whole request with a JSON ``body`` (``Host: hookline.test``)."""
    fields = {
        "Host": "hookline.test",
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        **headers,
    }
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in fields.items()), "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


@contextmanager
def raw_connection(port: int, timeout: float = TIMEOUT) -> Iterator[RawConnection]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        yield RawConnection(sock)
