"""Body, header and nesting limits: refused early, never buffered, in the contract's error shape."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from hookline.api.body import MAX_JSON_DEPTH, json_too_deep
from hookline.api.protocol import MAX_HEAD_BYTES
from tests.conftest import Account
from tests.support.server import ServerProcess, run_cli, running_server

HUNDRED_MB = 100 * 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str]]:
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('body')}/h.db"}
    assert run_cli("migrate", env=env).returncode == 0
    created = run_cli("accounts", "create", "limits", env=env)
    assert created.returncode == 0, created.stderr
    api_key = orjson.loads(created.stdout)["api_key"]
    with running_server(env, worker=False) as process:
        yield process, api_key


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def read_response(sock: socket.socket) -> bytes:
    data = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def stream_until_refused(port: int, head: bytes) -> tuple[int, bytes]:
    """Send ``head``, then up to 100 MB of chunked body until the server answers or hangs up.

    Returns (bytes of body sent, whatever answer could be read). The server closes the
    connection after its 413 with the rest of the body unread, so the kernel may reset the
    connection before the client reads the answer: callers check the server's log for it.
    """
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head)
    sock.setblocking(False)
    sent = 0
    chunk = b"%x\r\n" % CHUNK + b"x" * CHUNK + b"\r\n"
    answer = b""
    try:
        while sent < HUNDRED_MB and not answer:
            try:
                answer = sock.recv(65536)
                if not answer:
                    break  # closed by the server
            except BlockingIOError:
                pass
            try:
                sent += sock.send(chunk)
            except BlockingIOError:
                time.sleep(0.001)  # the server stopped reading; its answer is on the way
        sock.setblocking(True)
        return sent, answer + read_response(sock)
    except (BrokenPipeError, ConnectionResetError):
        return sent, answer
    finally:
        sock.close()


def logged_statuses(process: ServerProcess, path: str) -> list[int]:
    statuses = []
    for line in process.logs().splitlines():
        if line.startswith("{"):
            entry = orjson.loads(line)
            if entry.get("logger") == "hookline.access" and entry.get("path") == path:
                statuses.append(entry["status"])
    return statuses


def wait_for_status(process: ServerProcess, path: str, status: int, timeout: float = 10) -> bool:
    """The access line is written once the response went out: poll the log for it."""
    deadline = time.monotonic() + timeout
    while status not in logged_statuses(process, path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_100_mb_streamed_body_is_refused_without_being_read(
    server: tuple[ServerProcess, str],
) -> None:
    process, api_key = server
    before = rss_kib(process.process.pid)
    head = (
        b"POST /v1/contacts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + api_key.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    sent, answer = stream_until_refused(process.port, head)
    if answer:  # the connection reset may also cut the answer short after its status line
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert wait_for_status(process, "/v1/contacts", 413)
    # Only what fits in the socket buffers got out before the server hung up.
    assert sent < HUNDRED_MB // 10, sent
    assert rss_kib(process.process.pid) - before < 20 * 1024


def test_a_declared_100_mb_body_is_refused_before_any_byte(
    server: tuple[ServerProcess, str],
) -> None:
    process, api_key = server
    with socket.create_connection(("127.0.0.1", process.port)) as sock:
        sock.sendall(
            b"POST /v1/contacts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + api_key.encode() + b"\r\n"
            b"Content-Length: %d\r\n\r\n" % HUNDRED_MB
        )
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 413")
    assert b'"payload_too_large"' in answer


def test_oversized_headers_are_refused_in_the_error_shape(
    server: tuple[ServerProcess, str],
) -> None:
    process, _ = server
    with socket.create_connection(("127.0.0.1", process.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * MAX_HEAD_BYTES * 4)
        answer = read_response(sock)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    body = orjson.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert body["success"] is False
    assert body["error"]["code"] == "headers_too_large"
    # Headers of a normal size still work, and the count restarts with each request on a
    # kept-alive connection (ten 4 KB heads add up to more than the limit).
    with httpx.Client(base_url=process.base_url) as http:
        for _ in range(10):
            response = http.get("/healthz", headers={"X-Ok": "a" * 4000})
            assert response.status_code == 200
        assert response.http_version == "HTTP/1.1"


async def test_a_chunked_oversized_body_is_a_413_in_process(
    client: httpx.AsyncClient, account: Account
) -> None:
    async def body() -> Iterator[bytes]:  # type: ignore[misc]
        for _ in range(3):
            yield b" " * 40_000

    response = await client.post(
        "/v1/contacts",
        content=body(),
        headers={**account.headers, "content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


def nested(depth: int) -> bytes:
    return (
        b'{"first_name":"A","phone_number":"+14155550100","tags":'
        + b"[" * depth
        + b"]" * depth
        + b"}"
    )


async def test_json_nested_too_deep_is_refused(client: httpx.AsyncClient, account: Account) -> None:
    headers = {**account.headers, "content-type": "application/json"}
    response = await client.post("/v1/contacts", content=nested(MAX_JSON_DEPTH), headers=headers)
    assert response.status_code == 422
    assert response.json()["error"]["details"]["fields"][0]["field"] == "body"
    assert "nesting" in response.json()["error"]["message"]
    # Just under the limit it is an ordinary validation error about tags, not about depth.
    shallow = await client.post("/v1/contacts", content=nested(MAX_JSON_DEPTH - 2), headers=headers)
    assert shallow.status_code == 422
    assert shallow.json()["error"]["details"]["fields"][0]["field"].startswith("tags")


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert not json_too_deep(b'{"a": "' + b"[" * 100 + b'"}', 32)
    assert not json_too_deep(b'["\\"' + b"[" * 100 + b'"]', 32)
    assert json_too_deep(b"[" * 33 + b"]" * 33, 32)
    assert not json_too_deep(b"[" * 32 + b"]" * 32, 32)
    assert not json_too_deep(b"[[]]" * 100, 32)  # many brackets, shallow
