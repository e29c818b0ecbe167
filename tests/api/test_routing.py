"""``DirectRoute``'s runner: FastAPI's behaviour for every route, without its per-request solver;
an endpoint it cannot run is refused when declared."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from enum import StrEnum
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Cookie, Depends, FastAPI, Header, Query, Request
from fastapi.dependencies.utils import request_params_to_args
from fastapi.routing import APIRoute
from pydantic import BaseModel

from hookline.api.deps import ContactsRead
from hookline.api.errors import install_error_handlers
from hookline.api.responses import JSONResponse
from hookline.api.routing import DirectRoute, _RequestShape
from hookline.app import create_app
from hookline.errors import Unauthenticated
from tests.conftest import make_settings

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
async def listing(limit: int = 5) -> JSONResponse:
    return JSONResponse([{"n": n} for n in range(limit)])


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


async def _returns_a_list() -> list[dict[str, Any]]:
    return []


async def _reads_a_cookie(session: Annotated[str, Cookie()]) -> JSONResponse:
    return JSONResponse({})


async def _takes_an_int_id(thing_id: int) -> JSONResponse:
    return JSONResponse({})


async def _needs_no_key() -> JSONResponse:
    return JSONResponse({})


async def _two_keys(auth: ContactsRead, again: ContactsRead) -> JSONResponse:
    return JSONResponse({})


@pytest.mark.parametrize(
    ("path", "endpoint", "reason"),
    [
        ("/things/a", _returns_a_list, "returning a Response"),
        ("/things/b", _reads_a_cookie, "cookies"),
        ("/things/{thing_id}", _takes_an_int_id, "path parameters are str"),
        ("/v1/things", _needs_no_key, "declares the key it needs"),
        ("/things/c", _two_keys, "one key rule"),
    ],
)
def test_an_endpoint_the_runner_cannot_run_is_refused_when_declared(
    path: str, endpoint: Any, reason: str
) -> None:
    """No request of any route can take another way than the runner: there is no fall-back."""
    with pytest.raises(TypeError, match=reason):
        APIRouter(route_class=DirectRoute).add_api_route(path, endpoint, methods=["GET"])


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


async def test_a_query_parameter_is_read(client: httpx.AsyncClient) -> None:
    response = await client.get("/things?limit=2")
    assert response.json() == [{"n": 0}, {"n": 1}]


async def test_a_kept_query_string_is_not_checked_again(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shape check of a query string whose values are kept runs once, not per request;
    a query string it refuses is never kept, so it is refused every time."""
    checked: list[str] = []
    check = _RequestShape.check_query

    def counted(shape: _RequestShape, request: Request) -> None:
        checked.append(request.url.query)
        check(shape, request)

    monkeypatch.setattr(_RequestShape, "check_query", counted)
    for _ in range(3):
        assert (await client.get("/things?limit=2")).json() == [{"n": 0}, {"n": 1}]
        assert (await client.get("/things?limit=2&bogus=1")).status_code == 422
        assert (await client.get("/things?limit=%01")).status_code == 422
    assert checked.count("limit=2") == 1
    assert checked.count("limit=2&bogus=1") == checked.count("limit=%01") == 3


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


class Window(BaseModel):
    since: int = 0
    until: int | None = None


async def _tags(
    tags: Annotated[list[str], Query()] = [],  # noqa: B006 (FastAPI copies defaults)
    sizes: Annotated[list[int] | None, Query(max_length=2)] = None,
) -> JSONResponse:
    return JSONResponse({"tags": tags, "sizes": sizes})


async def _window(window: Annotated[Window, Query()]) -> JSONResponse:
    return JSONResponse(window.model_dump())


async def _header(
    x_thing: Annotated[int | None, Header()] = None, last_id: Annotated[str, Header()] = "-"
) -> JSONResponse:
    return JSONResponse({"x_thing": x_thing, "last_id": last_id})


async def _query_and_body(body: Body, limit: Annotated[int, Query(ge=1)] = 1) -> JSONResponse:
    return JSONResponse({"name": body.name, "limit": limit})


def _query_router(route_class: type[APIRoute]) -> APIRouter:
    queried = APIRouter(prefix="/q", route_class=route_class)
    queried.add_api_route("/list", _queried, methods=["GET"])
    queried.add_api_route("/must", _must, methods=["GET"])
    queried.add_api_route("/tags", _tags, methods=["GET"])
    queried.add_api_route("/window", _window, methods=["GET"])
    queried.add_api_route("/header", _header, methods=["GET"])
    queried.add_api_route("/both", _query_and_body, methods=["POST"])
    return queried


def _query_app(route_class: type[APIRoute]) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(_query_router(route_class))
    return app


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
        "/q/tags",
        "/q/tags?tags=a&tags=b&sizes=1&sizes=2",
        "/q/tags?sizes=1&sizes=2&sizes=3",
        "/q/tags?sizes=x",
        "/q/window",
        "/q/window?since=3&until=9",
        "/q/window?since=x",
        "/q/header",
        "POST /q/both",
        "POST /q/both?limit=0",
        "POST /q/both?limit=3 {}",
        "POST /q/both?limit=3 {not json",
    ],
)
async def test_parameters_read_by_the_runner_are_fastapis(path: str) -> None:
    """The runner's values, defaults and 422s are those of FastAPI's own handler (a plain
    ``APIRoute``; the paths name no unknown parameter, which only ``DirectRoute`` refuses)."""
    # "POST <target> [<body>]": a POST whose body is '{"name": "n"}' unless given.
    method, target, body = "GET", path, ""
    if path.startswith("POST "):
        method, target, *given = path.split(" ", 2)
        body = given[0] if given else '{"name": "n"}'
    headers = {"authorization": "ok", "x-thing": "7", "last-id": "e1"}
    answers = []
    for route_class in (DirectRoute, APIRoute):
        transport = httpx.ASGITransport(app=_query_app(route_class), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            if method == "POST":
                headers["content-type"] = "application/json"
                response = await c.post(target, content=body, headers=headers)
            else:
                response = await c.get(target, headers=headers)
        answer = response.json()
        if "error" in answer:
            answer["error"].pop("request_id", None)
        answers.append((response.status_code, answer))
    assert answers[0] == answers[1]


async def test_an_endpoint_that_returns_no_response_is_a_500(tmp_path: Path) -> None:
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'wrong.db'}"))
    app.include_router(router)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/things/wrong/t1")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"


def test_the_fastapi_internals_the_runner_relies_on_are_still_there() -> None:
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
    assert list(inspect.signature(request_params_to_args).parameters) == [
        "fields",
        "received_params",
    ]
    assert limit.validate("7", {}, loc=("query", "limit")) == (7, [])
    _, errors = limit.validate("x", {}, loc=("query", "limit"))
    assert errors and errors[0]["loc"] == ("query", "limit")


def test_every_api_route_reads_its_scalar_query_parameters_itself() -> None:
    """A scalar query parameter (a Literal too) is read by the runner's own loop, kept per query
    string, not by FastAPI's per-request solver, whatever route declares it."""
    app = create_app(make_settings("sqlite:///unused.db"))
    runners = [
        context.original_route
        for included in app.router.routes
        for context in getattr(included, "effective_route_contexts", list)()
        if isinstance(context.original_route, DirectRoute)
    ]
    assert len(runners) > 20
    assert [r.path for r in runners if not r.runner.scalar_query] == []
