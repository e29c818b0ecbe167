"""Application-wide behaviour: probes, request ids, errors from every layer, OpenAPI."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from hookline.app import create_app
from hookline.domain.readying import REQUEST_STATEMENTS
from hookline.storage.db import READY_CONNECTIONS, Database
from hookline.storage.statements import compiled_for
from tests.conftest import make_settings
from tests.support.postgres import PostgresServer, client_backends, others_last_statements
from tests.support.routes import http_routes


async def test_probes(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["database"] == "ok"


async def test_request_id_is_generated_or_echoed_when_sane(client: httpx.AsyncClient) -> None:
    generated = await client.get("/healthz")
    assert generated.headers["x-request-id"].startswith("req_")
    echoed = await client.get("/healthz", headers={"X-Request-Id": "abc-123"})
    assert echoed.headers["x-request-id"] == "abc-123"
    insane = await client.get("/healthz", headers={"X-Request-Id": "a b\tc" + "x" * 300})
    assert insane.headers["x-request-id"].startswith("req_")


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/nowhere", 404, "not_found"),
        ("GET", "/v1/nowhere", 404, "not_found"),
        ("PUT", "/v1/contacts", 405, "method_not_allowed"),
    ],
)
async def test_routing_errors_use_the_contract_body(
    client: httpx.AsyncClient, method: str, path: str, status: int, code: str
) -> None:
    response = await client.request(method, path)
    assert response.status_code == status
    body = response.json()
    assert body["success"] is False
    assert body["error"]["code"] == code
    assert body["error"]["request_id"] == response.headers["x-request-id"]


async def test_a_crash_is_a_json_500_without_a_trace(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'crash.db'}"))

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("SELECT secret FROM somewhere")

    # raise_app_exceptions: the crash is answered in full and never reaches the server, which
    # would otherwise close the kept-alive connection (tests/api/test_front.py).
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=True)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        with caplog.at_level(logging.ERROR):
            response = await client.get("/boom")
    assert response.status_code == 500
    body = response.json()
    assert body["error"]["code"] == "internal_error"
    assert "SELECT" not in response.text and "Traceback" not in response.text
    assert "connection" not in response.headers
    assert [r.getMessage() for r in caplog.records] == ["unhandled RuntimeError on GET /boom"]


async def test_a_server_on_postgres_readies_connections_for_requests_as_it_starts(
    pg_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Before the first request, the lifespan has opened ``READY_CONNECTIONS`` pooled
    connections and had each parse the API's statements (``domain.readying``): a fresh
    process's first requests paid for both, 36-56 ms for the key look-up alone. The worker is
    off here, so nothing else opens them or runs anything on them: each connection but the one
    asking last parsed the readying's last statement, in order after the others, and a
    statement that did not parse would be logged."""
    app = create_app(make_settings(pg_server.create_database()))
    with caplog.at_level(logging.WARNING, logger="hookline.storage"):
        async with app.router.lifespan_context(app):
            db: Database = app.state.db
            last = compiled_for(REQUEST_STATEMENTS[-1], db.connector.dialect).sql
            assert await others_last_statements(db) == [last] * (READY_CONNECTIONS - 1)
    assert caplog.records == []


async def test_a_server_with_its_worker_in_process_readies_twice_as_many(
    pg_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The worker's rounds, recorder and next-due look hold the connections it readied, and a
    request then met a cold one: the API and the worker, sharing a pool,
    ready twice as many, and each parses its statements without a warning."""
    app = create_app(make_settings(pg_server.create_database(), worker_in_process=True))
    with caplog.at_level(logging.WARNING, logger="hookline.storage"):
        async with app.router.lifespan_context(app):
            assert await client_backends(app.state.db) >= 2 * READY_CONNECTIONS
    assert caplog.records == []


async def test_a_server_whose_readying_fails_starts_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def refused(self: Database, statements: object, *, connections: int) -> None:
        raise ConnectionError("refused")

    monkeypatch.setattr(Database, "prepare", refused)
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'ready.db'}"))
    transport = httpx.ASGITransport(app=app)
    with caplog.at_level(logging.WARNING, logger="hookline.storage"):
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://t") as client,
        ):
            assert (await client.get("/readyz")).status_code == 200
    assert [r.getMessage() for r in caplog.records] == [
        "readying connections for the API's requests failed (ConnectionError: refused); the "
        "first runs open and parse them"
    ]


async def test_openapi_documents_every_route_and_the_error_body(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    schema = (await client.get("/v1/openapi.json")).json()
    documented = {
        (method.upper(), path) for path, item in schema["paths"].items() for method in item
    }
    v1_routes = [
        r for r in http_routes(app) if r.path.startswith("/v1/") and r.path != "/v1/openapi.json"
    ]
    assert len(v1_routes) >= 15
    for route in v1_routes:
        assert route.in_schema, f"{route.method} {route.path} is hidden from the OpenAPI"
        assert (route.method, route.path) in documented
    assert "ErrorOut" in schema["components"]["schemas"]
    for path, item in schema["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in item.items():
            responses = operation["responses"]
            assert "500" in responses, f"{method} {path} documents no 500"
            ref = responses["422"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/ErrorOut"), f"{method} {path} 422 is not the contract body"
    docs = await client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
