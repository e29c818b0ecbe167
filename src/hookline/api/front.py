"""``FrontDoor``: the one ASGI entry, every request's way in.

uvicorn calls it for every request, and no middleware sits around or inside it
(``add_middleware`` is refused), so what it does is done once per request, for every route:

1. a request id (a sane client ``X-Request-Id`` is echoed) for the response and the access log;
2. the head: over 16 KiB is a 431 (``api.protocol`` bounds heads still arriving), an HTTP/1.1
   request without exactly one Host a 400, a declared body over the limit a 413; each of these
   closes the connection;
3. the route: the first that matches, in FastAPI's order (``_Routes``);
4. the body of a POST, PUT, PATCH or DELETE, read whole and counted as it arrives (413 at the
   limit, nothing buffered past it; in this layer, so that FastAPI cannot turn it into a 400),
   and JSON nested deeper than ``MAX_JSON_DEPTH`` refused (422) before anything parses it;
5. an API route (``DirectRoute``) runs its runner (``api.routing``: the key and its scope, its
   rate limit, the request's shape, parameters and body, ``Idempotency-Key``, the endpoint);
   any other request (the dashboard's pages, ``/docs``, a path no route serves: 404, 405) goes
   through FastAPI's own router;
6. the answer: an error raised anywhere becomes the contract's error body (``api.errors``): a
   503 when the database cannot be reached, a 500 for anything unexpected, always a complete
   answer so the kept-alive connection stays usable; every ``/v1`` response carries the
   RateLimit headers, and one that no key paid for is charged to the client's address (its 429
   past that budget replaces the answer);
7. one metrics sample under the route's template, one access-log line (never a header value,
   query string or body), and, with tracing on, the request's server span around it all.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.convertors import StringConvertor
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Message, Receive, Scope, Send

from hookline import tracing
from hookline.api.body import MAX_JSON_DEPTH, ClientGone, json_too_deep, replay_body
from hookline.api.deps import Services, is_json_media
from hookline.api.errors import error_for_unexpected, error_json
from hookline.api.protocol import MAX_HEAD_BYTES, head_bytes, head_too_large
from hookline.api.routing import DirectRoute
from hookline.errors import (
    ApiError,
    BadRequest,
    MethodNotAllowed,
    PayloadTooLarge,
    ValidationFailed,
)
from hookline.guards.ratelimit import (
    STATE_KEY,
    RateLimiter,
    RateLimitState,
    over_budget,
    settled,
)
from hookline.ids import request_id as new_request_id
from hookline.logs import log_access
from hookline.metrics import observe_request, route_label
from hookline.schemas.failures import validation_failure

access_log = logging.getLogger("hookline.access")
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_CLOSE = (b"connection", b"close")


class FrontDoor(FastAPI):
    """FastAPI declares the routes and writes the OpenAPI document; this runs the requests."""

    def __init__(self, *, max_body_bytes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_body_bytes = max_body_bytes
        self._routes: _Routes | None = None
        self.parts: Services | None = None
        """The route runners' app parts, once the lifespan has made them (``services``)."""
        self._limiter: RateLimiter | None = None

    def add_middleware(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("the front door is the one ASGI layer: do a request's work in it")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan, a websocket
            if scope["type"] == "lifespan":  # it makes the app's parts anew
                self.parts = self._limiter = None
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        await _Exchange(self, scope, receive, send).run()

    def literal_refusal(self, scope: Scope) -> MethodNotAllowed | None:
        """A 405 for a method no route serves at a literal path (``/v1/contacts/bulk``), which
        a parameter (``/v1/contacts/{contact_id}``) would otherwise take: a literal segment
        beats a parameter."""
        if self._routes is None:
            self._routes = _Routes(self.router.routes)
        allowed = self._routes.literal_methods(scope["path"])
        if allowed is None or scope["method"] in allowed:
            return None
        error = MethodNotAllowed(f"{scope['method']} is not allowed on {scope['path']}.")
        error.headers["Allow"] = ", ".join(m for m in _METHODS if m in allowed)
        return error

    def route_of(self, scope: Scope) -> DirectRoute | None:
        """The route FastAPI's router would run, if it is an API route (its scope filled in)."""
        if self._routes is None:  # made on the first request: every route is declared by then
            self._routes = _Routes(self.router.routes)
        return self._routes.match(scope)

    def services(self) -> Services:
        """The app's parts for the route runners, read once the lifespan has made them."""
        if self.parts is None:
            self.parts = Services.of(self)
        return self.parts

    def rate_limiter(self) -> RateLimiter:
        if self._limiter is None:
            self._limiter = self.state.rate_limiter
        return self._limiter

    async def through_fastapi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """FastAPI's router, for the requests of any other route (or of none)."""
        await super().__call__(scope, receive, send)


_Matcher = Callable[[Scope], tuple[Match, Scope]]


_Entry = tuple[str, bool, _Matcher, "DirectRoute | None"]


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class _Routes:
    """The app's routes in FastAPI's order, each with the literal start of its path, kept by
    the first two segments of the paths they can match (``_bucket``), so that a request's path
    is tried only against the routes it can match, still in FastAPI's order."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        self._entries: list[_Entry] = []
        self._literal: dict[str, set[str]] = {}
        keys: list[str | None] = []
        for matcher, route in _in_order(routes):
            template = str(getattr(matcher, "path_format", ""))
            literal = template.split("{", 1)[0]
            exact = isinstance(matcher, Route) and "{" not in template
            if exact and template.startswith("/v1/"):
                self._literal.setdefault(template, set()).update(matcher.methods or ())
            self._entries.append((literal, exact, matcher.matches, route))
            keys.append(_bucket_of(matcher, template, literal))
        self._anywhere = [e for e, key in zip(self._entries, keys, strict=True) if key is None]
        self._buckets: dict[str, list[_Entry]] = {}
        for key in set(keys) - {None}:
            self._buckets[str(key)] = [
                e for e, own in zip(self._entries, keys, strict=True) if own in (key, None)
            ]

    def literal_methods(self, path: str) -> set[str] | None:
        """The methods the API's routes of literal path ``path`` serve; None if none has it."""
        return self._literal.get(path)

    def match(self, scope: Scope) -> DirectRoute | None:
        """The first route that matches in full, if it is an API route (the scope then filled
        in as FastAPI's router fills it); None for another (or none): FastAPI's router finds it
        again."""
        path: str = scope["path"]
        anywhere = bool(scope.get("root_path"))  # the path then starts with it
        if anywhere:
            entries = self._entries
        else:
            entries = self._buckets.get(_bucket(path), self._anywhere)
        for literal, exact, matches, route in entries:
            if not anywhere and not (path == literal if exact else path.startswith(literal)):
                continue
            if route is not None and not anywhere:
                found = _full_match(route, path, scope["method"])
                if found is None:
                    continue
                scope["path_params"] = found
                scope["endpoint"] = route.endpoint
                scope["route"] = route
                return route
            match, child_scope = matches(scope)
            if match is Match.FULL:
                if route is not None:
                    scope.update(child_scope)
                    scope["route"] = route
                return route
        return None


def _bucket(path: str) -> str:
    """A path's first two segments: ``/v1/contacts`` for ``/v1/contacts/{contact_id}``."""
    return "/".join(path.split("/", 3)[:3])


def _bucket_of(matcher: Any, template: str, literal: str) -> str | None:
    """The bucket of every path a route matches; None when they have no one bucket (a
    parameter within the first two segments, a mount, a host)."""
    if not isinstance(matcher, Route):
        return None
    if "{" not in template:
        return _bucket(template)
    return _bucket(literal) if literal.count("/") >= 3 else None


def _full_match(route: DirectRoute, path: str, method: str) -> dict[str, Any] | None:
    """``route.matches``' path parameters when it matches in full (Starlette's rule: the path
    regex, each parameter's convertor, the method), without the child scope it builds."""
    found = route.path_regex.match(path)
    if found is None or method not in (route.methods or ()):
        return None
    values: dict[str, Any] = found.groupdict()
    convertors = route.param_convertors
    for name, value in values.items():
        convertor = convertors[name]
        if type(convertor) is not StringConvertor:  # a str parameter is the text matched
            values[name] = convertor.convert(value)
    return values


def _in_order(routes: list[BaseRoute]) -> Iterator[tuple[Any, DirectRoute | None]]:
    """Each route as FastAPI's router tries them: what matches it, and the API route it is (None
    for any other). An included router's routes come from ``effective_route_contexts``; an API
    route must be included as declared (no prefix or dependencies added by the inclusion, which
    its runner would not know)."""
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is None:
            yield route, route if isinstance(route, DirectRoute) else None
            continue
        for context in contexts():
            original = context.original_route
            if not isinstance(original, DirectRoute):
                yield context.starlette_route or context, None
                continue
            added = len(context.dependant.dependencies) != len(original.dependant.dependencies)
            if context.path_format != original.path_format or added:
                raise TypeError(f"{original.path}: include an API router as it is declared")
            yield original, original


class _BodyTooLarge(Exception):
    pass


def request_id_for(client_id: str | None) -> str:
    """The client's ``X-Request-Id`` if it is sane, else a new id."""
    if client_id and _SANE_REQUEST_ID.match(client_id):
        return client_id
    return new_request_id()


def body_too_large(max_body_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The request body is larger than {max_body_bytes} bytes.")


def log_request(scope: Scope, state: dict[str, Any], status: int, started: float) -> None:
    """The access-log line of a request: never a header value, query string or body."""
    if not access_log.isEnabledFor(logging.INFO):
        return
    log_access(
        access_log,
        "request",
        {
            "request_id": state.get("request_id"),
            "account_id": state.get("account_id"),
            "method": scope["method"],
            "path": scope["path"],
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        },
    )


class _Exchange:
    """One request and its answer, as the module's doc lists the steps."""

    __slots__ = (
        "authorization",
        "content_length",
        "content_type",
        "door",
        "hosts",
        "receive",
        "received",
        "request_id",
        "route",
        "scope",
        "send",
        "sent",
        "started",
        "state",
        "status",
    )

    def __init__(self, door: FrontDoor, scope: Scope, receive: Receive, send: Send) -> None:
        self.door = door
        self.scope = scope
        self.receive = receive
        self.send = send
        self.started = time.perf_counter()
        self.status = 500
        self.sent = 0  # 1: the response has started; 2: it is complete
        self.route: DirectRoute | None = None
        self.received = 0
        client_id: bytes | None = None
        authorization: bytes | None = None
        self.content_length: bytes | None = None
        self.content_type = b""
        self.hosts = 0
        for name, value in scope["headers"]:  # the first of each, as Starlette's headers read
            if name == b"host":
                self.hosts += 1
            elif name == b"content-length":
                if self.content_length is None:
                    self.content_length = value
            elif name == b"content-type":
                if not self.content_type:
                    self.content_type = value
            elif name == b"authorization":
                if authorization is None:
                    authorization = value
            elif name == b"x-request-id" and client_id is None:
                client_id = value
        self.authorization = authorization.decode("latin-1") if authorization else None
        self.request_id = request_id_for(client_id.decode("latin-1") if client_id else None)
        self.state: dict[str, Any] = scope.setdefault("state", {})
        self.state["request_id"] = self.request_id

    async def run(self) -> None:
        try:
            if tracing.enabled():
                with tracing.server_span(self.scope) as span:
                    try:
                        await self._serve()
                    finally:
                        tracing.end_server_span(
                            span, self.scope["method"], self.status, self._template()
                        )
            else:
                await self._serve()
        finally:
            log_request(self.scope, self.state, self.status, self.started)
            observe_request(self.scope["method"], self._template(), self.status, self.started)

    def _template(self) -> str:
        if self.route is not None:
            return self.route.path
        return route_label(self.scope)

    async def _serve(self) -> None:
        scope = self.scope
        try:
            literal_refusal = self.door.literal_refusal(scope)
            if literal_refusal is None:
                self.route = self.door.route_of(scope)
            route = self.route
            # The head's refusals come first, whatever the path: a 405 is the route's answer.
            refusal = self._refusal_of_head()
            if refusal is not None:
                await self._respond(self._refusal(refusal))
                return
            if literal_refusal is not None:
                await self._respond(error_json(literal_refusal, self.request_id))
                return
            body = b""
            receive = self.receive
            if scope["method"] in _BODY_METHODS:
                try:
                    body = await self._read_body()
                except ClientGone:
                    return  # nobody is left to answer
                if is_json_media(self.content_type.decode("latin-1")) and json_too_deep(body):
                    too_deep = f"JSON nesting is deeper than {MAX_JSON_DEPTH} levels"
                    too_deep_error = ValidationFailed.for_field("body", too_deep)
                    await self._respond(error_json(too_deep_error, self.request_id))
                    return
                receive = replay_body(body, receive)
            else:
                receive = self._limited_receive
            if route is None:
                await self.door.through_fastapi(scope, receive, self._observed(self.send))
                return
            try:
                services = self.door.parts or self.door.services()
                response = await route.runner.respond(
                    scope, receive, body, services, self.authorization
                )
            except ApiError as error:
                response = error_json(error, self.request_id)
            except RequestValidationError as exc:
                response = error_json(validation_failure(exc.errors()), self.request_id)
            await self._respond(response)
        except _BodyTooLarge:
            if not self.sent:
                await self._respond(self._refusal(body_too_large(self._body_limit())))
        except Exception as exc:
            if self.sent == 1:
                raise  # half a response: only closing the connection can tell the client
            unexpected = error_for_unexpected(exc, scope["method"], scope["path"])
            if not self.sent:
                # A complete answer, so the kept-alive connection stays usable for the next one.
                await self._respond(error_json(unexpected, self.request_id))

    def _refusal_of_head(self) -> ApiError | None:
        """A head over 16 KiB, an HTTP/1.1 request without exactly one Host (RFC 9112 section
        3.2; the only malformed head httptools lets through), a body declared too large."""
        if head_bytes(self.scope) > MAX_HEAD_BYTES:
            return head_too_large()
        if self.scope.get("http_version") == "1.1" and self.hosts != 1:
            return BadRequest("An HTTP/1.1 request must carry exactly one Host header.")
        length = self.content_length
        if length is not None and length.isdigit() and int(length) > self._body_limit():
            return body_too_large(self._body_limit())
        return None

    def _body_limit(self) -> int:
        """The route's own limit (route metadata, ``routing.body_limit``), else the door's."""
        own = self.route.max_body_bytes if isinstance(self.route, DirectRoute) else None
        return own if own is not None else self.door.max_body_bytes

    def _refusal(self, error: ApiError) -> Response:
        """The answer to a request refused before its body was read: the connection closes."""
        response = error_json(error, self.request_id)
        response.raw_headers.append(_CLOSE)
        return response

    async def _read_body(self) -> bytes:
        limit = self._body_limit()
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > limit:
                raise _BodyTooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _limited_receive(self) -> Message:
        """``receive`` counting the bytes of a body nobody reads up front (a GET's)."""
        message = await self.receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.door.max_body_bytes:
                raise _BodyTooLarge
        return message

    async def _respond(self, response: Response) -> None:
        headers = await self._trailed(response.status_code, response.raw_headers)
        if headers is None:
            return  # replaced by the address's 429
        response.raw_headers = headers
        self.status = response.status_code
        if type(response).__call__ is Response.__call__ and response.background is None:
            await self.send(
                {"type": "http.response.start", "status": self.status, "headers": headers}
            )
            self.sent = 1
            await self.send({"type": "http.response.body", "body": response.body})
            self.sent = 2
            return
        self.sent = 1  # a stream: a failure from here on is half a response
        await response(self.scope, self.receive, self.send)
        self.sent = 2

    async def _trailed(
        self, status: int, headers: list[tuple[bytes, bytes]]
    ) -> list[tuple[bytes, bytes]] | None:
        """``headers`` with the request id and, on ``/v1``, the RateLimit headers; None when
        the address's budget refused the request and its 429 went out instead."""
        path: str = self.scope["path"]
        if not (path == "/v1" or path.startswith("/v1/")):
            return [*headers, (b"x-request-id", self.request_id.encode())]
        limiter = self.door.rate_limiter()
        limit: RateLimitState | None = self.state.get(STATE_KEY)
        if limit is None:  # no key paid for it
            limit = await settled(self.scope, limiter)
        if not limit.allowed and status != 429:
            await self._respond_over_budget(limit, closes=_CLOSE in headers)
            return None
        return [
            *headers,
            (b"x-request-id", self.request_id.encode()),
            *limit.headers(limiter.policy_header),
        ]

    async def _respond_over_budget(self, limit: RateLimitState, *, closes: bool) -> None:
        """Only a request no key paid for gets here: it changed nothing, so swapping its answer
        for the 429 is safe."""
        response = error_json(over_budget(limit), self.request_id)
        if closes:
            response.raw_headers.append(_CLOSE)
        await self._respond(response)

    def _observed(self, send: Send) -> Send:
        """``send`` for FastAPI's router: the same headers, status and 429 as ``_respond``."""

        async def observed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = await self._trailed(message["status"], list(message.get("headers", [])))
                if headers is None:
                    self.sent = 3  # the 429 went out: the rest of this answer is swallowed
                    return
                self.status = message["status"]
                self.sent = 1
                await send({**message, "headers": headers})
                return
            if self.sent == 3:
                return
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.sent = 2
            await send(message)

        return observed
