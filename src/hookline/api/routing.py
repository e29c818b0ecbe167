"""``DirectRoute``: calls simple endpoints without FastAPI's per-request dependency solving.

For every request FastAPI walks the endpoint's dependency tree, builds its parameters, and checks
the return value. That costs about 50 µs a request on this machine, more than the database work of
a read (docs/benchmarks.md). Most of our endpoints need none of that generality: their parameters
are the ``Request``, ``str`` path parameters, at most one JSON body model, and dependencies that
take only the ``Request`` (authentication, the database, the JSON content-type check), and
scalar query parameters (a list's ``limit``, ``cursor`` and filters). For those, ``DirectRoute``
builds a plan once, at start-up, and each request just runs it:

1. every dependency, in the order the endpoint declares them (auth before the body, so a bad key
   is a 401 before a bad body is a 415 or a 422, as with FastAPI);
2. the body, parsed with pydantic-core's ``from_json`` (it keeps big integers as integers, as
   ``json.loads`` does) and validated in Python mode, as FastAPI does (JSON mode words some
   errors differently, and those messages are public); errors become the same
   ``RequestValidationError`` FastAPI raises, with ``body`` at the head of each location, so the
   same handler renders them;
3. each query parameter, validated by FastAPI's own field for it (``ModelField.validate``, so
   the values, defaults and error messages are FastAPI's); a missing one takes its default.
   FastAPI's solver re-derives each field's kind on every request, 7-12% of a page of 50
   contacts; an endpoint with a query parameter and a body keeps FastAPI's handler (it reports
   both kinds of error in one 422);
4. the endpoint, which must return a ``Response``.

Every POST endpoint is wrapped in the ``Idempotency-Key`` guard
(``guards.idempotency.guard``), whichever handler runs it: the guard runs after the dependencies, so
a replay is authorised like a fresh request, and inside the request's transaction.

FastAPI internals this relies on, in this module only: the ``Dependant`` FastAPI builds for a
route (``call``, ``dependencies``, ``name``, ``request_param_name``, ``path_params``,
``query_params``, ``body_params`` and the rest ``_needs_fastapi`` looks at) and each query
``ModelField``'s ``validate``, ``field_info``, ``alias`` and ``default``. They are not
documented API, so the version is pinned in pyproject.toml and
``test_the_fastapi_internals_the_plan_relies_on_are_still_there`` fails loudly when an upgrade
moves them (then re-check this module and move the pin).

OpenAPI is unchanged: FastAPI builds the operation from the decorator and the signature as usual.
An endpoint that needs anything else (query parameters, an injected ``Response``, a dependency with
parameters of its own) silently gets FastAPI's own handler, so the route class is safe on any
router.

Either way, every request's shape is checked here, for every route, right after its key
(``_RequestShape``): a
query parameter the endpoint does not declare is a 422 naming it (a misspelled filter must never
return an unfiltered list), a query value with a control character is a 422, and a path id that
cannot be an id (``ids.pattern_of``) is a 404 before any database sees it.
"""

from __future__ import annotations

import copy
import inspect
import re
import types
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, Json, ValidationError
from pydantic_core import from_json
from starlette.responses import Response

from hookline import ids
from hookline.domain.validation import control_character_in
from hookline.errors import NotFound, ValidationFailed
from hookline.guards import idempotency

Handler = Callable[[Request], Coroutine[Any, Any, Response]]
_Dependency = Callable[[Request], Awaitable[Any]]


class DirectRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        self.idempotent = idempotency.applies_to(kwargs.get("methods"))
        if self.idempotent:
            if not _returns_response(endpoint):
                raise TypeError(
                    f"{endpoint.__qualname__}: POST endpoints must return a Response "
                    "(Idempotency-Key stores it)"
                )
            endpoint = idempotency.guard(endpoint)
        super().__init__(path, endpoint, **kwargs)

    plan: Plan | None = None
    """The route's plan, when it has one (``api.fast`` reads a list's query with it)."""

    def get_route_handler(self) -> Handler:
        shape = _RequestShape.of(self.dependant)
        plan = self.plan = _plan_for(self.dependant, shape)
        handler = (
            plan.handler
            if plan is not None
            else _Guarded(_guards_of(self.dependant), shape, super().get_route_handler()).handler
        )
        if self.idempotent:
            guarded: Handler = idempotency.with_request(handler)
            return guarded
        return handler


@dataclass(frozen=True, slots=True)
class _RequestShape:
    """The query parameters and path ids a route accepts. Checked after the key (so a key
    without the scope is a 403 whatever the path says) and before anything else."""

    known_query: frozenset[str]
    path_ids: tuple[tuple[str, re.Pattern[str]], ...]

    @classmethod
    def of(cls, dependant: Dependant) -> _RequestShape:
        path_names = sorted(_names(dependant, "path_params"))
        return cls(
            known_query=frozenset(_names(dependant, "query_params")),
            path_ids=tuple((name, re.compile(ids.pattern_of(name))) for name in path_names),
        )

    def check(self, request: Request) -> None:
        if request.scope.get("query_string"):
            self._check_query(request)
        path_params = request.path_params
        for name, pattern in self.path_ids:
            value = path_params.get(name)
            if isinstance(value, str) and not pattern.fullmatch(value):
                raise NotFound(f"No {name.removesuffix('_id')} with id {value}.")

    def _check_query(self, request: Request) -> None:
        fields: list[dict[str, str]] = []
        for name in dict.fromkeys(request.query_params.keys()):
            if name not in self.known_query:
                fields.append({"field": name, "message": f"{name} is not a known parameter"})
            elif any(
                control_character_in(value, name) for value in request.query_params.getlist(name)
            ):
                fields.append(
                    {"field": name, "message": f"{name} must not contain control characters"}
                )
        if fields:
            known = ", ".join(sorted(self.known_query)) or "none"
            message = f"{fields[0]['message']} (this endpoint takes: {known})"
            raise ValidationFailed(fields, message)


@dataclass(frozen=True, slots=True)
class _Guarded:
    """FastAPI's handler, after the route's request-only dependencies (authentication: they
    cache their result on the request, so FastAPI's second call is free) and the shape check."""

    guards: tuple[_Dependency, ...]
    shape: _RequestShape
    inner: Handler

    async def handler(self, request: Request) -> Response:
        for guard in self.guards:
            await guard(request)
        self.shape.check(request)
        return await self.inner(request)


def _guards_of(dependant: Dependant) -> tuple[_Dependency, ...]:
    found = (_request_only(sub) for sub in dependant.dependencies)
    return tuple(guard for guard in found if guard is not None)


@dataclass(frozen=True, slots=True)
class Plan:
    endpoint: Callable[..., Awaitable[Response]]
    request_name: str | None
    path_names: tuple[str, ...]
    dependencies: tuple[tuple[str | None, _Dependency], ...]
    body: tuple[str, type[BaseModel]] | None
    shape: _RequestShape
    query: tuple[Any, ...] = ()
    """FastAPI's ``ModelField`` of each query parameter (``Dependant.query_params``)."""

    async def handler(self, request: Request) -> Response:
        arguments: dict[str, Any] = {}
        for name, dependency in self.dependencies:
            value = await dependency(request)
            if name is not None:
                arguments[name] = value
        if self.request_name is not None:
            arguments[self.request_name] = request
        path_params = request.path_params
        for name in self.path_names:
            arguments[name] = path_params[name]
        arguments.update(self.query_arguments(request))
        if self.body is not None:
            name, model = self.body
            arguments[name] = validate_body(model, await request.body())
        response = await self.endpoint(**arguments)
        if not isinstance(response, Response):
            raise TypeError(f"{self.endpoint.__qualname__} must return a Response")
        return response

    def query_arguments(self, request: Request) -> dict[str, Any]:
        """The request's shape checked, then its query parameters' values by name; the 422
        of either, as the route answers it. Pure (no side effect), so ``api.fast`` runs it
        before deciding to answer a request itself."""
        self.shape.check(request)
        return _query_arguments(self.query, request) if self.query else {}


def _query_arguments(fields: tuple[Any, ...], request: Request) -> dict[str, Any]:
    """The query parameters' values, as FastAPI's ``request_params_to_args`` makes them for
    scalar fields (``_plan_for`` admits no others); all errors in one 422."""
    received = request.query_params
    values: dict[str, Any] = {}
    errors: list[Any] = []
    for field in fields:
        loc = ("query", field.alias)
        value = received.get(field.alias)
        if value is None:
            if field.field_info.is_required():
                errors.append(
                    {"type": "missing", "loc": loc, "msg": "Field required", "input": None}
                )
                continue
            value = _copy_of(field.default)
            if not field.field_info.validate_default:
                values[field.name] = value
                continue
        validated, field_errors = field.validate(value, values, loc=loc)
        if field_errors:
            errors.extend(field_errors)
        else:
            values[field.name] = validated
    if errors:
        raise RequestValidationError(errors)
    return values


_ATOMIC = (type(None), bool, int, float, str)


def _copy_of(default: Any) -> Any:
    """FastAPI's ``deepcopy`` of a default, without the call for the atomic values that it
    returns as they are (a list's ``limit`` and its ``None`` filters: six calls a page)."""
    return default if type(default) in _ATOMIC else copy.deepcopy(default)


def _scalar_query(field: Any) -> bool:
    """A query parameter ``_query_arguments`` reads as FastAPI does: one value under its own
    name (no list, model or JSON parameter, no validation alias)."""
    info = field.field_info
    if field.alias != field.name or info.validation_alias is not None:
        return False
    if any(type(item) is Json for item in info.metadata):
        return False
    return all(_scalar_type(member) for member in _members(info.annotation))


def _members(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) is Annotated:
        return _members(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return tuple(m for arg in get_args(annotation) for m in _members(arg))
    return (annotation,)


def _scalar_type(member: Any) -> bool:
    if member is type(None):
        return True
    return isinstance(member, type) and not issubclass(
        member, (BaseModel, list, tuple, set, frozenset, dict, bytes)
    )


def _names(dependant: Dependant, kind: str) -> set[str]:
    """The names of ``kind`` parameters of the endpoint and all its dependencies."""
    found = {field.alias for field in getattr(dependant, kind)}
    for sub in dependant.dependencies:
        found |= _names(sub, kind)
    return found


def validate_body(model: type[BaseModel], body: bytes) -> BaseModel:
    """``model`` from the raw body, failing exactly as FastAPI's own body validation does."""
    if not body:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}]
        )
    try:
        data = from_json(body)
    except ValueError as exc:
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": ("body",), "msg": str(exc)}]
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in errors]
        ) from None


def _plan_for(dependant: Dependant, shape: _RequestShape | None = None) -> Plan | None:
    call = dependant.call
    if call is None or not inspect.iscoroutinefunction(call) or not _returns_response(call):
        return None
    query = tuple(dependant.query_params)
    if _needs_fastapi(dependant, query_ok=True) or len(dependant.body_params) > 1:
        return None
    if query and (dependant.body_params or not all(_scalar_query(f) for f in query)):
        return None
    if any(field.field_info.annotation is not str for field in dependant.path_params):
        return None
    dependencies: list[tuple[str | None, _Dependency]] = []
    for sub in dependant.dependencies:
        dependency = _request_only(sub)
        if dependency is None:
            return None
        dependencies.append((sub.name, dependency))
    body: tuple[str, type[BaseModel]] | None = None
    if dependant.body_params:
        field = dependant.body_params[0]
        model = field.field_info.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        body = (field.name, model)
    return Plan(
        endpoint=call,
        request_name=dependant.request_param_name,
        path_names=tuple(field.name for field in dependant.path_params),
        dependencies=tuple(dependencies),
        body=body,
        shape=shape or _RequestShape.of(dependant),
        query=query,
    )


def _request_only(dependant: Dependant) -> _Dependency | None:
    """The dependency's callable if it is ``async def f(request: Request)`` and nothing more."""
    call = dependant.call
    if (
        call is None
        or not inspect.iscoroutinefunction(call)
        or dependant.request_param_name is None
    ):
        return None
    if (
        _needs_fastapi(dependant)
        or dependant.path_params
        or dependant.body_params
        or dependant.dependencies
    ):
        return None
    if len(inspect.signature(call).parameters) != 1:
        return None
    dependency: _Dependency = call
    return dependency


def _needs_fastapi(dependant: Dependant, *, query_ok: bool = False) -> bool:
    """Parameters only FastAPI's own solver fills in (scalar query parameters: ``Plan``)."""
    return bool(
        (dependant.query_params and not query_ok)
        or dependant.header_params
        or dependant.cookie_params
        or dependant.response_param_name
        or dependant.background_tasks_param_name
        or dependant.websocket_param_name
        or dependant.http_connection_param_name
        or dependant.security_scopes_param_name
    )


def _returns_response(call: Callable[..., Any]) -> bool:
    try:
        returned = get_type_hints(call).get("return")
    except (NameError, TypeError):
        return False
    return isinstance(returned, type) and issubclass(returned, Response)
