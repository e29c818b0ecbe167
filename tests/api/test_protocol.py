"""The request head limit (431) and malformed HTTP (400), against a real ``hookline serve``.

Both answers are the contract's error body with a request id that is also the ``X-Request-Id``
header and appears in the access log, whichever layer refused: the app (a complete head) or
the HTTP protocol (an incomplete head, a parser error).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from importlib.metadata import version

import httpx
import orjson
import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from hookline.api.protocol import MAX_HEAD_BYTES, BoundedHttpToolsProtocol, head_bytes
from hookline.cli import server_options
from tests.support.rawhttp import RawResponse, raw_connection
from tests.support.server import ServerProcess, running_server
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('http')}/h.db"}
    with running_server(env, worker=False) as process:
        yield process


def padded_head(size: int, path: bytes = b"/healthz") -> bytes:
    """A complete ``GET`` head of exactly ``size`` bytes."""
    start = b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nX-Pad: "
    end = b"\r\n\r\n"
    return start + b"a" * (size - len(start) - len(end)) + end


def access_entries(server: ServerProcess, request_id: str) -> list[dict[str, object]]:
    entries = []
    for line in server.logs().splitlines():
        if line.startswith("{") and request_id in line:
            entry = orjson.loads(line)
            if entry.get("logger") == "hookline.access" and entry.get("request_id") == request_id:
                entries.append(entry)
    return entries


def assert_refused(server: ServerProcess, answer: RawResponse, status: int, code: str) -> str:
    """The contract's error, a real request id in body, header and log; the connection closes."""
    assert answer.status == status, answer
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["connection"] == "close"
    body = answer.json()
    assert body["success"] is False
    assert body["error"]["code"] == code
    request_id = str(body["error"]["request_id"])
    assert request_id.startswith("req_") and len(request_id) > 20
    assert answer.headers["x-request-id"] == request_id
    wait_until(lambda: access_entries(server, request_id), message="access log line")
    assert access_entries(server, request_id)[0]["status"] == status
    return request_id


def test_a_head_of_exactly_16_kib_passes(server: ServerProcess) -> None:
    with raw_connection(server.port) as conn:
        conn.send(padded_head(MAX_HEAD_BYTES))
        assert conn.response().status == 200
        # The count starts again for the next request on the same connection.
        conn.send(padded_head(MAX_HEAD_BYTES))
        assert conn.response().status == 200


def test_one_byte_more_in_a_single_read_is_a_431_from_the_app(server: ServerProcess) -> None:
    with raw_connection(server.port) as conn:
        conn.send(padded_head(MAX_HEAD_BYTES + 1))
        answer = conn.response()
        assert conn.closed_by_server()
    request_id = assert_refused(server, answer, 431, "headers_too_large")
    # The whole head reached the app in one read, and the app measured it (its access line
    # names the path; the protocol's refusals cannot).
    assert access_entries(server, request_id)[0]["path"] == "/healthz"


@pytest.mark.parametrize("size", [17_000, 100_000, 250_000])
def test_heads_of_17_to_250_kb_sent_at_once_are_a_431(server: ServerProcess, size: int) -> None:
    with raw_connection(server.port) as conn:
        conn.send(padded_head(size, b"/v1/contacts"))
        answer = conn.response()
    assert_refused(server, answer, 431, "headers_too_large")


def test_an_incomplete_head_past_16_kib_is_a_431_from_the_protocol(server: ServerProcess) -> None:
    with raw_connection(server.port) as conn:
        conn.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 8_000)
        conn.send(b"a" * 9_000)  # never finished: only the protocol can answer
        answer = conn.response()
    request_id = assert_refused(server, answer, 431, "headers_too_large")
    assert "path" not in access_entries(server, request_id)[0]


MALFORMED = {
    "not HTTP": b"NOT HTTP AT ALL\r\n\r\n",
    "bad Content-Length": b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    "Transfer-Encoding with Content-Length": (
        b"POST /v1/contacts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: 3\r\n\r\n0\r\n\r\n"
    ),
    "two Content-Length": (
        b"POST /v1/contacts HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
    ),
    "space in a header name": b"GET / HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n",
    "NUL in the target": b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
    "non-ASCII target": b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n",
    "control character in a value": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n",
    "obsolete line folding": b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
    "unknown HTTP version": b"GET / HTTP/9.9\r\nHost: x\r\n\r\n",
    "bare LF line ends": b"GET / HTTP/1.1\nHost: x\n\n",
    "bad chunk size, after the head": (
        b"POST /v1/contacts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
    ),
    # The one malformed head httptools accepts; the app refuses it.
    "HTTP/1.1 without Host": b"GET /healthz HTTP/1.1\r\n\r\n",
    "HTTP/1.1 with two Hosts": b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
}


@pytest.mark.parametrize("data", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_http_is_a_400_bad_request_with_a_request_id(
    server: ServerProcess, data: bytes
) -> None:
    with raw_connection(server.port) as conn:
        conn.send(data)
        answer = conn.response()
    assert_refused(server, answer, 400, "bad_request")


def test_a_websocket_upgrade_is_answered_by_the_app(server: ServerProcess) -> None:
    """No WebSocket endpoints: the request gets the app's answer, not uvicorn's bare 403."""
    with raw_connection(server.port) as conn:
        conn.request(
            "GET",
            "/v1/contacts",
            {
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Version": "13",
            },
        )
        answer = conn.response()
    assert answer.status == 401
    assert answer.json()["error"]["request_id"] == answer.headers["x-request-id"]


def test_http_1_0_without_host_is_served(server: ServerProcess) -> None:
    with raw_connection(server.port) as conn:
        conn.send(b"GET /healthz HTTP/1.0\r\n\r\n")
        assert conn.response().status == 200


def test_head_bytes_is_the_size_on_the_wire() -> None:
    scope = {
        "method": "GET",
        "raw_path": b"/v1/contacts",
        "query_string": b"limit=5",
        "headers": [(b"host", b"x"), (b"x-pad", b"abc")],
    }
    wire = b"GET /v1/contacts?limit=5 HTTP/1.1\r\nhost: x\r\nx-pad: abc\r\n\r\n"
    assert head_bytes(scope) == len(wire)


def test_the_uvicorn_hooks_the_protocol_relies_on_are_still_there() -> None:
    """Fails loudly when an uvicorn upgrade moves what api/protocol.py overrides."""
    major, minor = (int(part) for part in version("uvicorn").split(".")[:2])
    assert (0, 30) <= (major, minor) < (0, 55), "re-check api/protocol.py, then move the pin"
    assert server_options()["http"] is BoundedHttpToolsProtocol
    for hook in ("data_received", "on_headers_complete", "on_message_complete"):
        assert hook in vars(HttpToolsProtocol), hook
    # A parser error is answered through send_400_response(msg).
    assert list(inspect.signature(HttpToolsProtocol.send_400_response).parameters) == [
        "self",
        "msg",
    ]
    assert "self.send_400_response(" in inspect.getsource(HttpToolsProtocol.data_received)
    # The stop (stopping.py): uvicorn's server calls shutdown() on each connection, a cycle's
    # keep_alive decides its Connection: close, pipelined cycles wait in ``pipeline``.
    assert "connection.shutdown()" in inspect.getsource(uvicorn.Server.shutdown)
    assert "shutdown" in vars(HttpToolsProtocol)
    cycle_init = inspect.getsource(RequestResponseCycle.__init__)
    for field in ("keep_alive", "response_started", "response_complete", "more_body"):
        assert f"self.{field} = " in cycle_init, field
    send = inspect.getsource(RequestResponseCycle.send)
    assert "if not self.keep_alive and not has_connection_close:" in send
    assert "self.pipeline" in inspect.getsource(HttpToolsProtocol.__init__)


async def test_the_app_refuses_a_head_over_16_kib_whatever_the_server(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/healthz", headers={"X-Pad": "a" * MAX_HEAD_BYTES})
    assert response.status_code == 431
    body = response.json()
    assert body["error"]["code"] == "headers_too_large"
    assert body["error"]["request_id"] == response.headers["x-request-id"]
    fine = await client.get("/healthz", headers={"X-Pad": "a" * (MAX_HEAD_BYTES - 200)})
    assert fine.status_code == 200
