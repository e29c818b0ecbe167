"""``FrontDoor``: the one way into every route; a crash is answered in full, so a kept-alive
connection survives it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated

import httpx
import orjson
import pytest
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response
from starlette.types import Message

import hookline
from hookline import ids, tracing
from hookline.api.deps import ContactsRead, ContactsWrite
from hookline.api.front import FrontDoor
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute
from hookline.app import create_app
from hookline.domain import keys
from hookline.errors import Forbidden
from tests.conftest import Account, make_settings, new_account
from tests.support.rawhttp import raw_connection
from tests.support.server import ServerProcess, run_cli, running_server


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[tuple[ServerProcess, str, Path]]:
    path = tmp_path / "h.db"
    env = {"HOOKLINE_DATABASE_URL": f"sqlite:///{path}"}
    assert run_cli("migrate", env=env).returncode == 0
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


def _asgi_apps() -> list[str]:
    """Every class of hookline's that is an ASGI layer of its own: it defines ``__call__(scope,
    receive, send)`` itself and is not a Response (a response answers one request, as the
    stream's does; a route only inherits Starlette's)."""
    found = []
    for module_info in pkgutil.walk_packages(hookline.__path__, "hookline."):
        if module_info.name.startswith(("hookline.storage.migrations", "hookline.__main__")):
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if not inspect.isclass(value) or value.__module__ != module.__name__:
                continue
            if issubclass(value, Response):
                continue
            call = vars(value).get("__call__")
            if call is None:
                continue
            if list(inspect.signature(call).parameters)[1:] == ["scope", "receive", "send"]:
                found.append(f"{module.__name__}.{name}")
    return found


def test_only_the_front_door_is_an_asgi_entry(tmp_path: Path) -> None:
    assert _asgi_apps() == ["hookline.api.front.FrontDoor"]
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'one.db'}"))
    assert isinstance(app, FrontDoor) and not app.user_middleware
    with pytest.raises(TypeError, match="one ASGI layer"):
        app.add_middleware(GZipMiddleware)


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[FastAPI]:
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'front.db'}"))
    async with app.router.lifespan_context(app):
        yield app


def _client(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://hookline.test")


async def _raw(
    app: FastAPI, method: str, path: str, headers: list[tuple[bytes, bytes]]
) -> Response:
    """``app``'s answer to a request of exactly these headers (and no body)."""
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("hookline.test", 80),
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start, body = sent[0], sent[1]
    response = Response(body["body"], start["status"])
    response.raw_headers = start["headers"]
    return response


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ([(b"host", b"h"), (b"x-pad", b"a" * 17_000)], 431, "headers_too_large"),
        ([], 400, "bad_request"),
        ([(b"host", b"a"), (b"host", b"b")], 400, "bad_request"),
        ([(b"host", b"h"), (b"content-length", b"99999999")], 413, "payload_too_large"),
    ],
)
async def test_a_bad_head_is_refused_before_a_literal_paths_405(
    app: FastAPI, headers: list[tuple[bytes, bytes]], status: int, code: str
) -> None:
    """``/v1/contacts/bulk`` serves POST only: a GET of it with a bad head gets the head's
    refusal, closing the connection, as on any other path."""
    for path in ("/v1/contacts/bulk", "/v1/contacts"):
        response = await _raw(app, "GET", path, headers)
        assert (response.status_code, orjson.loads(response.body)["error"]["code"]) == (
            status,
            code,
        ), path
        assert response.headers["connection"] == "close"


async def test_a_crash_in_a_route_fastapi_runs_is_answered_by_the_front_door(
    app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """A dashboard page is run by FastAPI's router: its crash gets the same complete answer."""

    async def broken_page() -> Response:
        raise RuntimeError("a page broke")

    app.add_api_route("/broken", broken_page, include_in_schema=False)
    async with _client(app) as client:
        response = await client.get("/broken")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert response.json()["error"]["request_id"] == response.headers["x-request-id"]
    assert response.headers.get("connection") != "close"
    assert caplog.text.count("unhandled RuntimeError on GET /broken") == 1


guarded: list[str] = []


async def _guard(request: Request) -> None:
    guarded.append(request.method)
    if request.headers.get("x-refuse"):
        raise Forbidden("the guard refused")


def _guarded_router() -> APIRouter:
    router = APIRouter(prefix="/v1/guarded", route_class=DirectRoute)

    @router.post("", status_code=201)
    async def create_guarded(
        auth: ContactsWrite, _guarded: Annotated[None, Depends(_guard)], body: Thing
    ) -> JSONResponse:
        return JSONResponse({"name": body.name}, status_code=201)

    @router.get("/{contact_id}")
    async def read_guarded(
        contact_id: str,
        auth: ContactsRead,
        _guarded: Annotated[None, Depends(_guard)],
        limit: Annotated[int, Query(ge=1)] = 1,
    ) -> JSONResponse:
        return JSONResponse({"id": contact_id, "limit": limit})

    return router


class Thing(BaseModel):
    name: str


async def test_a_guard_declared_on_a_route_runs_for_every_request_of_it(app: FastAPI) -> None:
    """Whatever the request looks like (a replayed Idempotency-Key, a query, tracing on), the
    route's guard runs, once; and what it refuses is refused."""
    app.include_router(_guarded_router())
    owner = await new_account(app.state.db, "guarded")
    contact = ids.contact_id()
    idempotent = {**owner.headers, "Idempotency-Key": "k1"}
    requests = [
        ("POST", "/v1/guarded", owner.headers, 201),
        ("POST", "/v1/guarded", idempotent, 201),
        ("POST", "/v1/guarded", idempotent, 201),  # the replay
        ("GET", f"/v1/guarded/{contact}", owner.headers, 200),
        ("GET", f"/v1/guarded/{contact}?limit=3", owner.headers, 200),
        ("GET", f"/v1/guarded/{contact}?limit=0", owner.headers, 422),
    ]
    guarded.clear()
    async with _client(app) as client:
        for traced in (False, True):
            exporter = InMemorySpanExporter()
            if traced:
                provider = TracerProvider()
                provider.add_span_processor(SimpleSpanProcessor(exporter))
                tracing.use(provider)
            try:
                for method, path, headers, status in requests:
                    response = await client.request(
                        method, path, headers=headers, json={"name": "x"}
                    )
                    assert response.status_code == status, (traced, path, response.text)
                    refused = await client.request(
                        method, path, headers={**headers, "X-Refuse": "1"}, json={"name": "x"}
                    )
                    assert refused.status_code == 403, (traced, path, refused.text)
                    assert refused.json()["error"]["message"] == "the guard refused"
            finally:
                tracing.stop()
            assert bool(exporter.get_finished_spans()) is traced
    assert len(guarded) == 2 * 2 * len(requests)


def _path_with_ids(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda found: str(getattr(ids, found.group(1))()), path)


async def test_every_api_route_declares_its_scope_once_and_the_front_door_enforces_it(
    app: FastAPI,
) -> None:
    """Each /v1 operation of the OpenAPI document is a route with a key rule (its scope, or any
    key): without a key it is a 401, with a key of every other scope a 403 naming the scope,
    with a key of that scope alone neither; and the document says so (401, and 403 if scoped)."""
    routes = {
        (method, route.path): route
        for included in app.routes
        for context in getattr(included, "effective_route_contexts", list)()
        if isinstance(route := context.original_route, DirectRoute)
        for method in route.methods or ()
    }
    operations = [
        (method.upper(), path, operation)
        for path, item in app.openapi()["paths"].items()
        if path.startswith("/v1/")
        for method, operation in item.items()
    ]
    assert len(operations) >= 25
    accounts: dict[tuple[str, ...], tuple[Account, Account]] = {}
    async with _client(app) as client:
        for method, path, operation in operations:
            route = routes[(method, path)]
            assert route.needs_key, path
            assert "401" in operation["responses"]
            assert ("403" in operation["responses"]) is bool(route.scopes), path
            if route.scopes not in accounts:
                # Every scope that is not one of the route's, and then each of them alone.
                others = [s for s in keys.SCOPES if s not in route.scopes] or None
                accounts[route.scopes] = (
                    await new_account(app.state.db, "others", others),
                    await new_account(app.state.db, "only", list(route.scopes[:1]) or None),
                )
            lacking, having = accounts[route.scopes]
            target = _path_with_ids(path)
            anonymous = await client.request(method, target, json={})
            assert anonymous.status_code == 401, (method, path)
            if route.scopes:
                refused = await client.request(method, target, headers=lacking.headers, json={})
                assert refused.status_code == 403, (method, path)
                message = refused.json()["error"]["message"]
                assert all(scope in message for scope in route.scopes), message
            if method == "GET" and path.endswith("/stream"):
                continue  # an answer that never ends
            allowed = await client.request(method, target, headers=having.headers, json={})
            assert allowed.status_code not in (401, 403), (method, path, allowed.text)
