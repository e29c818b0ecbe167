"""``RequestContext``: a crash is answered in full, so a kept-alive connection survives it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from starlette.types import Receive, Scope, Send

from hookline.app import create_app
from tests.conftest import make_settings
from tests.support.rawhttp import raw_connection
from tests.support.server import ServerProcess, run_cli, running_server


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[tuple[ServerProcess, str, Path]]:
    path = tmp_path / "h.db"
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{path}"}
    created = run_cli("accounts", "create", "crash", env=env)
    assert created.returncode == 0, created.stderr
    with running_server(env, worker=False) as server:
        yield server, orjson.loads(created.stdout)["api_key"], path


def test_a_500_keeps_the_kept_alive_connection_usable(
    sqlite_server: tuple[ServerProcess, str, Path],
) -> None:
    server, key, path = sqlite_server
    auth = {"Authorization": f"Bearer {key}"}
    with raw_connection(server.port) as conn:
        conn.request("GET", "/v1/contacts", auth)
        assert conn.response().status == 200
        # A real bug under a real request: the table the handler reads is gone.
        with sqlite3.connect(path) as sabotage:
            sabotage.execute("ALTER TABLE contacts RENAME TO contacts_gone")
        conn.request("GET", "/v1/contacts", auth)
        crashed = conn.response()
        assert crashed.status == 500
        assert crashed.json()["error"]["code"] == "internal_error"
        assert crashed.json()["error"]["request_id"] == crashed.headers["x-request-id"]
        assert "contacts_gone" not in crashed.body.decode()
        # The contract allows "Connection: close" or a usable connection; this one is usable.
        assert crashed.headers.get("connection") != "close"
        conn.request("GET", "/healthz")
        assert conn.response().status == 200
        with sqlite3.connect(path) as repair:
            repair.execute("ALTER TABLE contacts_gone RENAME TO contacts")
        conn.request("GET", "/v1/contacts", auth)
        assert conn.response().status == 200
    logs = server.logs()
    assert logs.count("unhandled OperationalError on GET /v1/contacts") == 1  # logged once
    assert "Exception in ASGI application" not in logs  # never reached uvicorn


async def test_a_crash_outside_it_says_connection_close(tmp_path: Path) -> None:
    """The only 500 the server then follows by closing the connection, so it announces it."""
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'outer.db'}"))

    class Broken:
        def __init__(self, app: object) -> None:
            pass

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                raise RuntimeError("an outer middleware broke")

    app.add_middleware(Broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/healthz")
    assert response.status_code == 500
    assert response.headers["connection"] == "close"
    assert response.json()["error"]["code"] == "internal_error"
