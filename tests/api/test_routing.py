"""``DirectRoute``: the same behaviour as FastAPI's handler, without its per-request machinery."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from enum import StrEnum
from importlib.metadata import version
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.routing import APIRoute
from pydantic import BaseModel

from hookline.api import contacts
from hookline.api.errors import install_error_handlers
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute, _plan_for
from hookline.errors import Unauthenticated

calls: list[str] = []


async def first(request: Request) -> str:
    calls.append("first")
    if request.headers.get("authorization") != "ok":
        raise Unauthenticated("no")
    return "account-1"


async def second(request: Request) -> None:
    calls.append("second")


class Kind(StrEnum):
    big = "big"
    small = "small"


class Body(BaseModel):
    name: str
    size: int = 0


router = APIRouter(prefix="/things", route_class=DirectRoute)


@router.post("/{thing_id}")
async def create(
    request: Request,
    thing_id: str,
    account: Annotated[str, Depends(first)],
    _second: Annotated[None, Depends(second)],
    body: Body,
) -> JSONResponse:
    calls.append("endpoint")
    return JSONResponse(
        {
            "thing": thing_id,
            "account": account,
            "name": body.name,
            "size": str(body.size),
            "path": request.url.path,
        },
        status_code=201,
    )


@router.get("")
async def listing(limit: int = 5) -> list[dict[str, Any]]:
    return [{"n": n} for n in range(limit)]


@router.get("/wrong/{thing_id}")
async def not_a_response(thing_id: str) -> JSONResponse:
    return {"thing": thing_id}  # type: ignore[return-value]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    calls.clear()
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        yield c


def test_simple_endpoints_get_a_plan_and_the_rest_fastapi() -> None:
    plans = {route.name: _plan_for(route.dependant) for route in router.routes}  # type: ignore[attr-defined]
    assert plans["create"] is not None
    assert plans["listing"] is None  # a query parameter: FastAPI's own handler


def test_the_hot_api_endpoints_run_their_plan() -> None:
    """Behaviour is the same either way, so only this catches a silent fall-back to FastAPI's
    handler (e.g. an annotation that no longer resolves) on the endpoints the benchmark measures."""
    planned = {
        (method, route.path)
        for route in contacts.router.routes
        if isinstance(route, DirectRoute) and _plan_for(route.dependant) is not None
        for method in route.methods or ()
    }
    assert ("POST", "/v1/contacts") in planned
    assert ("GET", "/v1/contacts/{contact_id}") in planned
    assert ("GET", "/v1/contacts") in planned  # scalar query parameters: the plan reads them


async def test_dependencies_run_in_order_before_the_body(client: httpx.AsyncClient) -> None:
    response = await client.post("/things/t1", json={"name": "x"}, headers={"authorization": "ok"})
    assert response.status_code == 201
    assert response.json() == {
        "thing": "t1",
        "account": "account-1",
        "name": "x",
        "size": "0",
        "path": "/things/t1",
    }
    assert calls == ["first", "second", "endpoint"]


async def test_a_failing_dependency_wins_over_a_bad_body(client: httpx.AsyncClient) -> None:
    response = await client.post("/things/t1", content=b"{not json")
    assert response.status_code == 401
    assert calls == ["first"]


@pytest.mark.parametrize(
    ("content", "status", "code"),
    [
        (b"{not json", 400, "invalid_json"),
        (b"", 400, "invalid_json"),
        (b"[1, 2]", 400, "invalid_json"),
        (b'{"size": 1}', 422, "validation_error"),
        (b'{"name": "x", "size": "big"}', 422, "validation_error"),
    ],
)
async def test_body_errors_are_fastapis(
    client: httpx.AsyncClient, content: bytes, status: int, code: str
) -> None:
    response = await client.post(
        "/things/t1",
        content=content,
        headers={"authorization": "ok", "content-type": "application/json"},
    )
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert "endpoint" not in calls


async def test_field_errors_name_the_field_without_the_body_prefix(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/things/t1", json={"name": "x", "size": "big"}, headers={"authorization": "ok"}
    )
    fields = response.json()["error"]["details"]["fields"]
    assert [f["field"] for f in fields] == ["size"]


async def test_fallback_endpoints_still_get_fastapis_parameters(client: httpx.AsyncClient) -> None:
    response = await client.get("/things?limit=2")
    assert response.json() == [{"n": 0}, {"n": 1}]


async def _queried(
    request: Request,
    account: Annotated[str, Depends(first)],
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=5)] = None,
    offset: Annotated[int | None, Query(ge=0)] = None,
    kind: Annotated[Kind | None, Query()] = None,
    required: Annotated[str, Query(min_length=1)] = "",
) -> JSONResponse:
    return JSONResponse(
        {"limit": limit, "cursor": cursor, "offset": offset, "kind": kind, "required": required}
    )


async def _must(request: Request, needed: Annotated[int, Query()]) -> JSONResponse:
    return JSONResponse({"needed": needed})


def _query_router(route_class: type[APIRoute]) -> APIRouter:
    queried = APIRouter(prefix="/q", route_class=route_class)
    queried.add_api_route("/list", _queried, methods=["GET"])
    queried.add_api_route("/must", _must, methods=["GET"])
    return queried


def _query_app(route_class: type[APIRoute]) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(_query_router(route_class))
    return app


def test_scalar_query_parameters_get_a_plan() -> None:
    routes = [r for r in _query_router(DirectRoute).routes if isinstance(r, DirectRoute)]
    assert len(routes) == 2
    assert all(_plan_for(route.dependant) is not None for route in routes)


@pytest.mark.parametrize(
    "path",
    [
        "/q/list",
        "/q/list?limit=3&cursor=abc&offset=7&kind=big",
        "/q/list?limit=",
        "/q/list?limit=0",
        "/q/list?limit=101&offset=-1",
        "/q/list?limit=abc&cursor=toolong",
        "/q/list?kind=huge",
        "/q/list?required=",
        "/q/list?limit=2&limit=3",
        "/q/must",
        "/q/must?needed=",
        "/q/must?needed=x",
        "/q/must?needed=4",
    ],
)
async def test_query_parameters_read_by_the_plan_are_fastapis(path: str) -> None:
    """The plan's values, defaults and 422s are those of FastAPI's own handler (a plain
    ``APIRoute``; the paths name no unknown parameter, which only ``DirectRoute`` refuses)."""
    answers = []
    for route_class in (DirectRoute, APIRoute):
        transport = httpx.ASGITransport(app=_query_app(route_class), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            response = await c.get(path, headers={"authorization": "ok"})
        body = response.json()
        if "error" in body:
            body["error"].pop("request_id", None)
        answers.append((response.status_code, body))
    assert answers[0] == answers[1]


async def test_an_endpoint_that_returns_no_response_is_a_500(client: httpx.AsyncClient) -> None:
    response = await client.get("/things/wrong/t1")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"


def test_the_fastapi_internals_the_plan_relies_on_are_still_there() -> None:
    """Fails loudly when a FastAPI upgrade moves what api/routing.py reads (its docstring lists
    them): re-check the module, then move the pin in pyproject.toml."""
    major, minor = (int(part) for part in version("fastapi").split(".")[:2])
    assert (0, 115) <= (major, minor) < (0, 166), "re-check api/routing.py, then move the pin"

    async def endpoint(request: Request, item_id: str, limit: int = 10) -> None: ...

    dependant = APIRoute("/items/{item_id}", endpoint).dependant
    for attribute in (
        "call",
        "dependencies",
        "name",
        "request_param_name",
        "path_params",
        "query_params",
        "body_params",
        "header_params",
        "cookie_params",
        "response_param_name",
        "background_tasks_param_name",
        "websocket_param_name",
        "http_connection_param_name",
        "security_scopes_param_name",
    ):
        assert hasattr(dependant, attribute), attribute
    assert dependant.call is endpoint and dependant.request_param_name == "request"
    [limit] = dependant.query_params
    assert (limit.name, limit.alias, limit.default) == ("limit", "limit", 10)
    assert not limit.field_info.is_required() and limit.field_info.annotation is int
    assert list(inspect.signature(limit.validate).parameters)[:3] == ["value", "values", "loc"]
    assert limit.validate("7", {}, loc=("query", "limit")) == (7, [])
    _, errors = limit.validate("x", {}, loc=("query", "limit"))
    assert errors and errors[0]["loc"] == ("query", "limit")
