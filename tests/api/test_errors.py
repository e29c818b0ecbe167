"""``api.errors``: the trailing-slash redirect stays on this site whatever ``Host`` says."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.rawhttp import raw_connection
from tests.support.server import ServerProcess, running_server

HOSTILE = {"Host": "evil.example"}


@pytest.mark.parametrize(
    ("method", "path", "location"),
    [
        ("GET", "/v1/contacts/", "/v1/contacts"),
        ("GET", "/v1/contacts///", "/v1/contacts"),
        ("GET", "/v1/contacts/?limit=5&tags=a%2Cb", "/v1/contacts?limit=5&tags=a%2Cb"),
        ("POST", "/v1/contacts/", "/v1/contacts"),
        ("GET", "/v1/contacts/abc%20def/", "/v1/contacts/abc%20def"),
        ("GET", "/dashboard/", "/dashboard"),
    ],
)
async def test_the_slash_redirect_is_relative(
    client: httpx.AsyncClient, method: str, path: str, location: str
) -> None:
    response = await client.request(method, path, headers=HOSTILE)
    assert response.status_code == 307
    assert response.headers["location"] == location


@pytest.mark.parametrize(
    "path",
    [
        "//evil.example/",  # would be "//evil.example": another site to a browser
        "/\\evil.example/",
        "/%2Fevil.example/",
        "/nowhere/",
        "/dashboard/static/missing.css/",  # a Mount matches both: no redirect loop
    ],
)
async def test_no_redirect_off_site_or_to_nothing(client: httpx.AsyncClient, path: str) -> None:
    # The path as sent, not as a URL reference: httpx reads "//evil.example/" as a host and "/".
    request = client.build_request("GET", "/", headers=HOSTILE)
    request.url = request.url.copy_with(raw_path=path.encode())
    response = await client.send(request)
    assert response.status_code == 404
    assert "location" not in response.headers
    assert response.json()["error"]["code"] == "not_found"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path: Path = tmp_path_factory.mktemp("slash") / "h.db"
    with running_server({"HOOKLINE_DATABASE_URL": f"sqlite:///{path}"}, worker=False) as process:
        yield process


@pytest.mark.parametrize(
    ("target", "location"),
    [
        (b"/v1/contacts/", "/v1/contacts"),
        (b"http://evil.example/v1/contacts/", "/v1/contacts"),  # absolute-form target
        (b"//evil.example/v1/contacts/", None),
    ],
)
def test_a_hostile_host_never_reaches_the_location(
    server: ServerProcess, target: bytes, location: str | None
) -> None:
    with raw_connection(server.port) as conn:
        conn.send(b"GET " + target + b" HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        answer = conn.response()
    if location is None:
        assert answer.status == 404
        assert "location" not in answer.headers
    else:
        assert answer.status == 307
        assert answer.headers["location"] == location
