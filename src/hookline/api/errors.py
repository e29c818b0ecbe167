"""Every error, from every layer, in the contract's body (routing, validation, crashes)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from hookline.api.responses import JSONResponse
from hookline.errors import (
    ApiError,
    InternalError,
    MethodNotAllowed,
    NotFound,
    ServiceUnavailable,
    error_body,
)
from hookline.logs import redact_path
from hookline.schemas.failures import validation_failure
from hookline.storage.outage import is_store_unavailable

log = logging.getLogger("hookline.errors")


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", "") or "")


def error_response(request: Request, error: ApiError) -> JSONResponse:
    return error_json(error, request_id_of(request))


def error_json(error: ApiError, request_id: str) -> JSONResponse:
    """The response an ``ApiError`` raised by a route becomes."""
    return JSONResponse(
        error_body(error.code, error.message, request_id, error.details),
        status_code=error.status_code,
        headers=error.headers,
    )


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(request, exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(request, validation_failure(exc.errors()))


def _matches_a_route(request: Request, path: str) -> bool:
    # A fresh scope: the router has already rewritten the request's (a Mount's root_path).
    probe = {"type": "http", "method": request.method, "root_path": "", "path": path}
    return any(route.matches(probe)[0] is not Match.NONE for route in request.app.routes)


def _is_network_path(location: str) -> bool:
    # Browsers read "//host", and "/" then a backslash then "host", as another site.
    return not location.startswith("/") or location[1:2] in ("/", "\\")


def slash_twin_location(request: Request) -> str | None:
    """Where a path that matches no route would match with its trailing slash toggled, as a
    relative reference (path and query only). Never built from the ``Host`` header, so a forged
    Host cannot turn the redirect into one to another site."""
    path = request.scope["path"]
    twin = path.rstrip("/") if path.endswith("/") else path + "/"
    if path == "/" or _is_network_path(twin) or _matches_a_route(request, path):
        return None
    if not _matches_a_route(request, twin):
        return None
    raw = (request.scope.get("raw_path") or path.encode()).split(b"?", 1)[0].decode("latin-1")
    location = raw.rstrip("/") if path.endswith("/") else raw + "/"
    if _is_network_path(location):
        return None
    query = request.scope.get("query_string", b"").decode("latin-1")
    return f"{location}?{query}" if query else location


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    error: ApiError
    if exc.status_code == 404:
        location = slash_twin_location(request)
        if location is not None:
            # 307 keeps the method and body, as Starlette's own slash redirect did.
            return Response(status_code=307, headers={"Location": location})
        error = NotFound(f"No route matches {request.method} {request.url.path}.")
    elif exc.status_code == 405:
        error = MethodNotAllowed(f"{request.method} is not allowed on {request.url.path}.")
    else:
        error = ApiError(str(exc.detail))
        error.status_code = exc.status_code
        error.code = {400: "invalid_json", 401: "unauthenticated", 403: "forbidden"}.get(
            exc.status_code, "internal_error"
        )
    if exc.headers:
        error.headers.update(exc.headers)
    if exc.status_code == 405:
        error.headers["Allow"] = ", ".join(allowed_methods(request))
    return error_response(request, error)


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette's 405 names only the first
    route's)."""
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes
        )
    ]


def error_for_unexpected(exc: Exception, method: str, path: str) -> ApiError:
    """The contract's error for an exception nothing else handled, logged once.

    A database that cannot be reached is a 503 ``service_unavailable`` with ``Retry-After``
    (logged as a warning naming the exception types, never their text: SQLAlchemy's carries the
    statement's parameters); anything else is a bug, a 500 logged with its traceback.
    """
    if is_store_unavailable(exc):
        chain: list[str] = []
        cause: BaseException | None = exc
        while cause is not None and len(chain) < 4:
            chain.append(type(cause).__name__)
            cause = cause.__cause__
        log.warning(
            "database unavailable (%s) on %s %s", " <- ".join(chain), method, redact_path(path)
        )
        return ServiceUnavailable()
    log.error(
        "unhandled %s on %s %s",
        type(exc).__name__,
        method,
        redact_path(path),
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return InternalError()


async def _to_the_front_door(request: Request, exc: Exception) -> JSONResponse:
    # FastAPI's last-resort layer (around the routes FastAPI runs: the dashboard, /docs) hands an
    # unexpected exception on: the front door answers it once, and keeps the connection.
    raise exc


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _to_the_front_door)
