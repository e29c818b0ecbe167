"""``DirectRoute`` and its ``Runner``: every request of an API route runs through one runner.

FastAPI declares the routes (paths, parameters, models, the OpenAPI document); it does not run
them. Each ``DirectRoute`` makes, once, a ``Runner`` from the ``Dependant`` FastAPI builds for
its endpoint, and every request of the route runs it (``api.front.FrontDoor`` calls it directly;
under a plain FastAPI app, the route's handler does). An endpoint the runner cannot run is
refused when the route is made (``TypeError``), never handed to FastAPI's solver, so there is
no second way a request could take.

The runner's steps, in this order:

1. the key: the route's scope is route metadata (``DirectRoute.scopes``), declared once by the
   auth parameter's type (``ContactsWrite``, ...: ``api.deps.require``). The key (401), its
   rate limit (429), then the scope (403). A ``/v1`` route that declares no key is refused;
2. the other dependencies, each ``async def f(request: Request)``, in declaration order
   (``JsonContent``: 415 before the body is read);
3. the request's shape (``_RequestShape``): a query parameter the endpoint does not declare is a
   422 naming it (a misspelled filter must never return an unfiltered list), a query value with
   a control character is a 422, and a path id that cannot be an id (``ids.pattern_of``) is a
   404 before any database sees it;
4. path parameters (``str``), query and header parameters, each validated by FastAPI's own
   field for it (so the values, defaults and error messages are FastAPI's), and the body model,
   validated in Python mode as FastAPI does; a body that is not JSON is FastAPI's 400, and the
   parameters' and the body's errors are one 422, as FastAPI reports them;
5. on a POST, the ``Idempotency-Key`` guard (``guards.idempotency.answer_once``), so a replay
   is authorised and validated like a fresh request, and runs inside the request's transaction;
6. the endpoint, which must return a ``Response``.

Scalar query parameters are read by ``_query_arguments`` (FastAPI's rules for one value under
the parameter's own name, without re-deriving each field's kind per request), and their values
are kept per query string (they depend on nothing else), and so is the query's shape check
(a kept query string is not checked again); list- and model-typed ones, and
header parameters, by FastAPI's ``request_params_to_args``.

FastAPI internals this relies on, in this module only: the ``Dependant`` FastAPI builds for a
route (``call``, ``dependencies``, ``name``, ``request_param_name``, ``path_params``,
``query_params``, ``header_params``, ``body_params`` and the rest ``_unsupported`` looks at),
each parameter ``ModelField``'s ``validate``, ``field_info``, ``alias`` and ``default``, and
``request_params_to_args``. They are not documented API, so the version is pinned in
pyproject.toml and ``test_the_fastapi_internals_the_runner_relies_on_are_still_there`` fails
loudly when an upgrade moves them (then re-check this module and move the pin).
"""

from __future__ import annotations

import copy
import inspect
import re
import types
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import request_params_to_args
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, Json, ValidationError
from pydantic_core import from_json
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import Receive, Scope

from hookline import ids
from hookline.api.deps import KeyRule, Services, authenticate, key_rule_of, service_of
from hookline.caches import remember
from hookline.domain.validation import control_character_in
from hookline.errors import NotFound, ValidationFailed
from hookline.guards import idempotency

Handler = Callable[[Request], Coroutine[Any, Any, Response]]
_Dependency = Callable[[Request], Awaitable[Any]]
Endpoint = Callable[..., Any]
_QUERY_STRINGS = 256
"""Query strings whose arguments a route keeps: more empty its table (``caches.remember``)."""


def body_limit(max_bytes: int) -> Callable[[Endpoint], Endpoint]:
    """Route metadata: this route takes bodies up to ``max_bytes`` instead of the front door's
    default (``FrontDoor.max_body_bytes``). Put it under the route's decorator."""

    def mark(endpoint: Endpoint) -> Endpoint:
        endpoint.max_body_bytes = max_bytes  # type: ignore[attr-defined]
        return endpoint

    return mark


class DirectRoute(APIRoute):
    runner: Runner

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)  # makes ``runner`` (get_route_handler)
        if self.runner.key is None and (path == "/v1" or path.startswith("/v1/")):
            raise TypeError(f"{path}: a /v1 route declares the key it needs (api.deps.require)")

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes of which the route's key needs one (route metadata); empty when any key
        will do."""
        key = self.runner.key
        return key[1].scopes if key is not None else ()

    @property
    def max_body_bytes(self) -> int | None:
        """The route's own body limit (``body_limit``); None: the front door's."""
        limit: int | None = getattr(self.endpoint, "max_body_bytes", None)
        return limit

    @property
    def needs_key(self) -> bool:
        return self.runner.key is not None

    def get_route_handler(self) -> Handler:
        """The route's runner, made once; under a plain FastAPI app (tests) this handler runs
        it, and the front door calls it itself."""
        runner = self.runner = Runner.of(
            self.dependant, idempotent=idempotency.applies_to(self.methods)
        )

        async def handler(request: Request) -> Response:
            body = await request.body()
            authorization = request.headers.get("authorization")
            services = Services.of(request.app)
            return await runner.respond(
                request.scope, request.receive, body, services, authorization
            )

        return handler


def direct_routes(routes: Iterable[BaseRoute]) -> Iterator[DirectRoute]:
    """The API routes among an app's routes, those of included routers too (FastAPI keeps an
    included router as one entry, its routes reached by ``effective_route_contexts``)."""
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        candidates = [route] if contexts is None else [c.original_route for c in contexts()]
        yield from (found for found in candidates if isinstance(found, DirectRoute))


@dataclass(frozen=True, slots=True)
class _RequestShape:
    """The query parameters and path ids a route accepts. Checked after the route's
    dependencies (so a key without the scope is a 403 whatever the path says)."""

    known_query: frozenset[str]
    path_ids: tuple[tuple[str, re.Pattern[str]], ...]

    @classmethod
    def of(cls, dependant: Dependant) -> _RequestShape:
        path_names = sorted(_names(dependant, "path_params"))
        return cls(
            known_query=frozenset(_names(dependant, "query_params")),
            path_ids=tuple((name, re.compile(ids.pattern_of(name))) for name in path_names),
        )

    def check_path(self, path_params: dict[str, Any]) -> None:
        for name, pattern in self.path_ids:
            value = path_params.get(name)
            if isinstance(value, str) and not pattern.fullmatch(value):
                raise NotFound(f"No {name.removesuffix('_id')} with id {value}.")

    def check_query(self, request: Request) -> None:
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


@dataclass(slots=True)
class Runner:
    """How every request of one route is run (the module's doc lists the steps)."""

    endpoint: Callable[..., Awaitable[Response]]
    key: tuple[str | None, KeyRule] | None
    """The auth parameter's name (None: a route-level dependency) and the route's key rule."""
    dependencies: tuple[tuple[str | None, _Dependency], ...]
    services: tuple[tuple[str, Callable[[Services], Any]], ...]
    """The dependencies that only hand over an app part (``DB``, ``AppSettings``)."""
    request_name: str | None
    path_names: tuple[str, ...]
    query: tuple[Any, ...]
    """FastAPI's ``ModelField`` of each query parameter (``Dependant.query_params``)."""
    scalar_query: bool
    headers: tuple[Any, ...]
    body: tuple[str, type[BaseModel]] | None
    shape: _RequestShape
    idempotent: bool
    takes_request: bool
    """Whether a step reads a Starlette ``Request`` (made only then)."""
    _queries: dict[bytes, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, dependant: Dependant, *, idempotent: bool) -> Runner:
        call = dependant.call
        name = getattr(call, "__qualname__", repr(call))
        if call is None or not inspect.iscoroutinefunction(call) or not _returns_response(call):
            raise TypeError(f"{name}: an API endpoint is an async def returning a Response")
        unsupported = _unsupported(dependant)
        if unsupported or len(dependant.body_params) > 1:
            raise TypeError(f"{name}: the route runner does not read {unsupported or 'bodies'}")
        if any(param.field_info.annotation is not str for param in dependant.path_params):
            raise TypeError(f"{name}: path parameters are str (ids are checked by their shape)")
        key, services, dependencies = _split_dependencies(name, dependant)
        query = tuple(dependant.query_params)
        headers = tuple(dependant.header_params)
        request_name = dependant.request_param_name
        return cls(
            endpoint=call,
            key=key,
            dependencies=dependencies,
            services=services,
            request_name=request_name,
            path_names=tuple(param.name for param in dependant.path_params),
            query=query,
            scalar_query=all(_scalar_query(param) for param in query),
            headers=headers,
            body=_body_of(name, dependant),
            shape=_RequestShape.of(dependant),
            idempotent=idempotent,
            takes_request=bool(request_name or dependencies or query or headers or idempotent),
        )

    async def respond(
        self,
        scope: Scope,
        receive: Receive,
        body: bytes,
        services: Services,
        authorization: str | None,
    ) -> Response:
        """The route's response to the request of ``scope`` whose body is ``body``; its refusals
        raised (``ApiError``, ``RequestValidationError``), for the caller to answer."""
        arguments: dict[str, Any] = {}
        if self.key is not None:
            name, rule = self.key
            context = await authenticate(scope, authorization, services)
            rule.allow(context)
            if name is not None:
                arguments[name] = context
        query_string: bytes = scope.get("query_string", b"")
        request = Request(scope, receive) if self.takes_request or query_string else None
        for name, dependency in self.dependencies:
            value = await dependency(request)  # type: ignore[arg-type]
            if name is not None:
                arguments[name] = value
        for name, part in self.services:
            arguments[name] = part(services)
        if self.request_name is not None:
            arguments[self.request_name] = request
        if query_string and query_string not in self._queries:
            # A kept query string passed this check when it was kept (it depends on nothing else).
            self.shape.check_query(request)  # type: ignore[arg-type]
        path_params: dict[str, Any] = scope.get("path_params", {})
        self.shape.check_path(path_params)
        for name in self.path_names:
            arguments[name] = path_params[name]
        errors = self._read_parameters(request, arguments) if request is not None else []
        if self.body is not None:
            name, model = self.body
            arguments[name] = validate_body(model, body, errors)
        elif errors:
            raise RequestValidationError(errors)
        if self.idempotent:
            return await idempotency.answer_once(
                request,  # type: ignore[arg-type]
                body,
                lambda: self._call(arguments),
            )
        response = await self.endpoint(**arguments)
        return response if isinstance(response, Response) else self._checked(response)

    async def _call(self, arguments: dict[str, Any]) -> Response:
        return self._checked(await self.endpoint(**arguments))

    def _checked(self, response: Any) -> Response:
        if not isinstance(response, Response):
            raise TypeError(f"{self.endpoint.__qualname__} must return a Response")
        return response

    def _read_parameters(self, request: Request, arguments: dict[str, Any]) -> list[Any]:
        """Query and header parameters into ``arguments``; their validation errors."""
        errors: list[Any] = []
        if self.query:
            values, found = self._query_arguments(request, request.scope.get("query_string", b""))
            arguments.update(values)
            errors.extend(found)
        if self.headers:
            values, found = request_params_to_args(self.headers, request.headers)
            arguments.update(values)
            errors.extend(found)
        return errors

    def _query_arguments(
        self, request: Request, query_string: bytes
    ) -> tuple[dict[str, Any], list[Any]]:
        if not self.scalar_query:
            return request_params_to_args(self.query, request.query_params)
        # Scalar values depend on the query string alone, and the endpoint gets them as
        # keywords (it cannot change them): kept per query string, a refused one not kept.
        kept = self._queries.get(query_string)
        if kept is not None:
            return kept, []
        values, errors = _query_arguments(self.query, request)
        if errors:
            return values, errors
        return remember(self._queries, query_string, values, limit=_QUERY_STRINGS), []


_Services = tuple[tuple[str, Callable[[Services], Any]], ...]
_Dependencies = tuple[tuple[str | None, _Dependency], ...]


def _split_dependencies(
    name: str, dependant: Dependant
) -> tuple[
    tuple[str | None, KeyRule] | None, _Services, tuple[tuple[str | None, _Dependency], ...]
]:
    """The route's key rule (one at most), the app parts it takes, and its other dependencies,
    each request-only."""
    key: tuple[str | None, KeyRule] | None = None
    services: list[tuple[str, Callable[[Services], Any]]] = []
    others: list[tuple[str | None, _Dependency]] = []
    for sub in dependant.dependencies:
        rule = key_rule_of(sub.call)
        if rule is not None:
            if key is not None:
                raise TypeError(f"{name}: a route declares one key rule")
            key = (sub.name, rule)
            continue
        part = service_of(sub.call)
        if part is not None and sub.name is not None:
            services.append((sub.name, part))
            continue
        dependency = _request_only(sub)
        if dependency is None:
            raise TypeError(f"{name}: dependency {sub.call!r} must be async def f(request)")
        others.append((sub.name, dependency))
    return key, tuple(services), tuple(others)


def _body_of(name: str, dependant: Dependant) -> tuple[str, type[BaseModel]] | None:
    if not dependant.body_params:
        return None
    param = dependant.body_params[0]
    model = param.field_info.annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{name}: the body is one pydantic model")
    return param.name, model


def _query_arguments(fields: tuple[Any, ...], request: Request) -> tuple[dict[str, Any], list[Any]]:
    """The query parameters' values, as FastAPI's ``request_params_to_args`` makes them for
    scalar fields; and their errors."""
    received = request.query_params
    values: dict[str, Any] = {}
    errors: list[Any] = []
    for param in fields:
        loc = ("query", param.alias)
        value = received.get(param.alias)
        if value is None:
            if param.field_info.is_required():
                errors.append(
                    {"type": "missing", "loc": loc, "msg": "Field required", "input": None}
                )
                continue
            value = _copy_of(param.default)
            if not param.field_info.validate_default:
                values[param.name] = value
                continue
        validated, field_errors = param.validate(value, values, loc=loc)
        if field_errors:
            errors.extend(field_errors)
        else:
            values[param.name] = validated
    return values, errors


_ATOMIC = (type(None), bool, int, float, str)


def _copy_of(default: Any) -> Any:
    """FastAPI's ``deepcopy`` of a default, without the call for the atomic values that it
    returns as they are."""
    return default if type(default) in _ATOMIC else copy.deepcopy(default)


def _scalar_query(param: Any) -> bool:
    """A query parameter ``_query_arguments`` reads as FastAPI does: one value under its own
    name (no list, model or JSON parameter, no validation alias)."""
    info = param.field_info
    if param.alias != param.name or info.validation_alias is not None:
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
    if member is type(None) or get_origin(member) is Literal:
        return True
    return isinstance(member, type) and not issubclass(
        member, (BaseModel, list, tuple, set, frozenset, dict, bytes)
    )


def _names(dependant: Dependant, kind: str) -> set[str]:
    """The names of ``kind`` parameters of the endpoint and all its dependencies (a model's
    fields for a model-typed query parameter)."""
    found: set[str] = set()
    for param in getattr(dependant, kind):
        models = [m for m in _members(param.field_info.annotation) if _is_model(m)]
        if not models:
            found.add(param.alias)
        for model in models:
            found |= {info.alias or name for name, info in model.model_fields.items()}
    for sub in dependant.dependencies:
        found |= _names(sub, kind)
    return found


def _is_model(member: Any) -> bool:
    return isinstance(member, type) and issubclass(member, BaseModel)


def validate_body(
    model: type[BaseModel], body: bytes, errors: list[Any] | None = None
) -> BaseModel:
    """``model`` from the raw body, failing exactly as FastAPI's own body validation does
    (``errors``: the parameters' errors, reported with the body's in one 422)."""
    earlier = errors or []
    if not body:
        raise RequestValidationError(
            [
                *earlier,
                {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None},
            ]
        )
    try:
        data = from_json(body)
    except ValueError as exc:
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": ("body",), "msg": str(exc)}]
        ) from None
    try:
        valid = model.model_validate(data)
    except ValidationError as exc:
        found = exc.errors(include_url=False)
        raise RequestValidationError(
            [*earlier, *({**error, "loc": ("body", *error["loc"])} for error in found)]
        ) from None
    if earlier:
        raise RequestValidationError(earlier)
    return valid


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
        _unsupported(dependant)
        or dependant.query_params
        or dependant.header_params
        or dependant.path_params
        or dependant.body_params
        or dependant.dependencies
    ):
        return None
    if len(inspect.signature(call).parameters) != 1:
        return None
    dependency: _Dependency = call
    return dependency


def _unsupported(dependant: Dependant) -> str:
    """The kinds of parameter only FastAPI's own solver fills in, named; empty if none."""
    kinds = {
        "cookies": dependant.cookie_params,
        "an injected Response": dependant.response_param_name,
        "BackgroundTasks": dependant.background_tasks_param_name,
        "a WebSocket": dependant.websocket_param_name,
        "an HTTPConnection": dependant.http_connection_param_name,
        "SecurityScopes": dependant.security_scopes_param_name,
    }
    return ", ".join(kind for kind, present in kinds.items() if present)


def _returns_response(call: Callable[..., Any]) -> bool:
    try:
        returned = get_type_hints(call).get("return")
    except (NameError, TypeError):
        return False
    return isinstance(returned, type) and issubclass(returned, Response)
