"""``FastPath``: the hot routes answered in one pure-ASGI layer, everything else unchanged.

``POST /v1/contacts`` and ``GET /v1/contacts/{contact_id}`` are most of an API's traffic. Through
the full app each passes five middlewares (metrics, rate-limit headers, request context, body
guard, Starlette's exception layer), the router's scan of every route, a ``Request`` and the
route's plan: about a third of a POST's CPU before any of its own work (docs/benchmarks.md,
tenth round). This layer, in front of the whole app (FastAPI's own outer layers included),
does that work once, for the requests it is sure of, and calls the very handlers the routes
call (``api.contacts.created``, ``found``, ``updated``). ``PATCH /v1/contacts/{contact_id}``
and the list page, ``GET /v1/contacts`` with its query (``api.contacts.list_contacts``), are
answered the same way.

It is safe by construction rather than by re-implementing every rule: it answers a request only
when everything the full app would check first is known to pass, and it decides that before
any side effect. Anything else goes to the full app untouched (the body it read is replayed):

* the head: the method and path of a hot route (the contact id of the shape ids have), no query
  string but the list's, no ``root_path``, HTTP/1.1 with one Host and a head within the limit,
  no header that the routes read repeated, no ``Idempotency-Key`` (the guard lives in the full
  app), no
  ``Transfer-Encoding``; for a POST or PATCH a ``Content-Length`` within the body limit and a
  JSON ``Content-Type``, for a GET no ``Content-Length``; a ``Bearer`` key of the right shape;
* the body (POST, PATCH): read whole, nested no deeper than the body guard allows, valid as
  ``ContactCreate`` or ``ContactUpdate`` (these are pure, so the order in which the full app
  runs them, after the key, changes nothing);
* the list's query: accepted by the route's own plan (``api.routing.Plan.query_arguments``:
  no unknown parameter, no control character, each value valid by FastAPI's field for it), whose
  values are then the very arguments the full app would pass; a query it refuses is the full
  app's 422;
* the key: it exists, is live and has the route's scope (a read, no side effect).

Only then does it charge the key's rate-limit budget (a limiter that fails leaves the request
to the full app too), and from there it answers everything
itself, exactly as the full app would: the 429 past the budget, the handler's response or its
``ApiError`` (the 404 of an unknown contact, the list's 422 for a cursor or phone number its
handler refuses), and the 500/503 of an unexpected exception, each
with ``X-Request-Id`` and the ``RateLimit`` headers in the full app's order, one metrics sample
under the route's template and one access-log line. ``tests/api/test_fast.py`` sends the same
requests, hypothesis-generated and bad ones included, through both and compares the answers.

Not installed when tracing is on (its span takes the route from FastAPI's router), nor with
``HOOKLINE_FAST_PATH=false``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hookline import ids
from hookline.api import contacts
from hookline.api.body import MAX_JSON_DEPTH, ClientGone, json_too_deep, read_body, replay_body
from hookline.api.deps import bearer_token, is_json_media, remember_use
from hookline.api.errors import error_for_unexpected, error_json
from hookline.api.middleware import error_message, log_request, request_id_for
from hookline.api.routing import DirectRoute, Plan, validate_body
from hookline.caches import remember
from hookline.domain import keys
from hookline.domain.keys import AuthContext
from hookline.errors import ApiError, Unauthenticated
from hookline.guards.ratelimit import RateLimiter, RateLimitState, key_identity, over_budget
from hookline.limits.http import MAX_HEAD_BYTES, head_bytes
from hookline.metrics import observe_request
from hookline.schemas.contacts import ContactCreate, ContactUpdate
from hookline.storage.db import Database

# The headers this layer reads; a request repeating any of them goes to the full app, whose
# rules for repeats (the first wins, Host must be single) it then need not know.
_READ = frozenset(
    {
        b"host",
        b"authorization",
        b"content-type",
        b"content-length",
        b"transfer-encoding",
        b"idempotency-key",
        b"x-request-id",
    }
)
_CONTACTS = "/v1/contacts"
_CONTACT_PREFIX = "/v1/contacts/"
_CONTACT_ID = re.compile(ids.pattern_of("contact_id"))
_LIST_QUERIES = 256


def _read_once(scope: Scope) -> dict[bytes, bytes] | None:
    """The headers of ``_READ`` the request has, or None if it repeats one."""
    found: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        if name in _READ:
            if name in found:
                return None
            found[name] = value
    return found


@dataclass(frozen=True, slots=True)
class _Hot:
    """A request this layer may answer, as far as its head tells."""

    method: str
    route: str  # the template, as the metrics label it
    scope_needed: str
    token: str
    client_request_id: str | None
    contact_id: str | None  # GET and PATCH of one contact

    @property
    def lists(self) -> bool:
        return self.method == "GET" and self.contact_id is None


_NEEDED = {"POST": "contacts:write", "GET": "contacts:read", "PATCH": "contacts:write"}


def _hot_route(scope: Scope, max_body_bytes: int) -> _Hot | None:
    method, path = scope["method"], scope["path"]
    contact_id: str | None = None
    if path == _CONTACTS and method in ("POST", "GET"):
        route = _CONTACTS
    elif method in ("GET", "PATCH") and path.startswith(_CONTACT_PREFIX):
        contact_id = path[len(_CONTACT_PREFIX) :]
        if not _CONTACT_ID.fullmatch(contact_id):
            return None
        route = _CONTACT_PREFIX + "{contact_id}"
    else:
        return None
    # Only the list reads a query (its plan checks it, ``FastPath._listing``).
    if scope.get("query_string") and not (method == "GET" and route == _CONTACTS):
        return None
    if scope.get("root_path") or scope.get("http_version") != "1.1":
        return None
    headers = _read_once(scope)
    if headers is None or b"host" not in headers:
        return None
    if b"idempotency-key" in headers or b"transfer-encoding" in headers:
        return None
    if not _body_declared_as(method, headers, max_body_bytes):
        return None
    if head_bytes(scope) > MAX_HEAD_BYTES:
        return None
    token = _well_formed_key(headers.get(b"authorization"))
    if token is None:
        return None
    request_id = headers.get(b"x-request-id")
    return _Hot(
        method=method,
        route=route,
        scope_needed=_NEEDED[method],
        token=token,
        client_request_id=request_id.decode("latin-1") if request_id is not None else None,
        contact_id=contact_id,
    )


def _body_declared_as(method: str, headers: dict[bytes, bytes], max_body_bytes: int) -> bool:
    """A POST or PATCH declares a JSON body within the limit; a GET declares none (its
    Content-Type, which clients often send on every request, is read by nobody)."""
    length = headers.get(b"content-length")
    if method == "GET":
        return length is None
    if length is None or not length.isdigit() or int(length) > max_body_bytes:
        return False
    return is_json_media(headers.get(b"content-type", b"").decode("latin-1"))


def _well_formed_key(header: bytes | None) -> str | None:
    """The key of a ``Bearer`` header (its checksum is ``keys.authenticate``'s first check)."""
    try:
        return bearer_token(header.decode("latin-1") if header is not None else None)
    except Unauthenticated:
        return None


async def _send_whole(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _disconnected() -> Receive:
    async def receive() -> Message:
        return {"type": "http.disconnect"}

    return receive


Answer = Callable[[AuthContext], Awaitable[Response]]
Model = TypeVar("Model", bound=BaseModel)


def _valid(model: type[Model], body: bytes) -> Model | None:
    """The body as ``model``, if the body guard and the route would both accept it."""
    if json_too_deep(body, MAX_JSON_DEPTH):
        return None
    try:
        valid = validate_body(model, body)
    except (RequestValidationError, ValueError, RecursionError):
        return None
    return valid if isinstance(valid, model) else None


class FastPathApp(FastAPI):
    """FastAPI with ``FastPath`` in front of everything, FastAPI's own outer layers included
    (its telemetry check, the server-error and body-limit layers: ~15 µs a request)."""

    fast_path: FastPath | None = None

    def put_fast_path_in_front(self, *, max_body_bytes: int) -> None:
        self.fast_path = FastPath(self.full, owner=self, max_body_bytes=max_body_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.fast_path is not None:
            await self.fast_path(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def full(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app without the fast path."""
        await super().__call__(scope, receive, send)


class FastPath:
    """In front of ``full`` (the app as it would run without this layer)."""

    def __init__(self, full: ASGIApp, *, owner: FastAPI, max_body_bytes: int) -> None:
        self.full = full
        self.owner = owner
        self.state = owner.state  # db, rate_limiter, background_tasks
        self.max_body_bytes = max_body_bytes
        self.answered = 0  # requests this layer answered itself (the tests check it works)
        self._list_queries: dict[bytes, dict[str, Any]] = {}
        owner.state.fast_path = self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.full(scope, receive, send)
            return
        started = time.perf_counter()
        hot = _hot_route(scope, self.max_body_bytes)
        if hot is None:
            await self.full(scope, receive, send)
            return
        body = b""
        answer: Answer | None
        if hot.lists:
            answer = self._listing(scope)
        elif hot.method == "GET":
            answer = self._reading(hot.contact_id or "")
        else:
            try:
                body = await read_body(receive)
            except ClientGone:
                await self.full(scope, _disconnected(), send)
                return
            answer = self._writing(hot, body)
        context = await self._authorised(hot) if answer is not None else None
        limit = await self._charged(context) if context is not None else None
        if answer is None or context is None or limit is None:
            await self.full(scope, replay_body(body, receive), send)
            return
        await self._answer(scope, send, hot, context, limit, answer, started)

    async def _charged(self, context: AuthContext) -> RateLimitState | None:
        """The key's budget, charged with this request. A limiter that fails (it fails open
        on its own when its storage is down) leaves the request to the full app, uncharged."""
        limiter: RateLimiter = self.state.rate_limiter
        try:
            return await limiter.hit(key_identity(context))
        except Exception:
            return None

    async def _authorised(self, hot: _Hot) -> AuthContext | None:
        """The key's context if it is live and has the route's scope. Any failure (a database
        that cannot be reached) is the full app's to answer: it runs the same look-up."""
        try:
            context = await keys.authenticate(self.state.db, hot.token)
        except Exception:
            return None
        if context is None or hot.scope_needed not in context.scopes:
            return None
        return context

    def _writing(self, hot: _Hot, body: bytes) -> Answer | None:
        """The POST's or PATCH's handler, if its body is one the full app would accept."""
        db: Database = self.state.db
        if hot.contact_id is None:
            created = _valid(ContactCreate, body)
            if created is None:
                return None

            async def create(context: AuthContext) -> Response:
                return await contacts.created(db, context.account_id, created)

            return create
        contact_id, changes = hot.contact_id, _valid(ContactUpdate, body)
        if changes is None:
            return None

        async def update(context: AuthContext) -> Response:
            return await contacts.updated(db, context.account_id, contact_id, changes)

        return update

    def _listing(self, scope: Scope) -> Answer | None:
        """The list's handler, if the query is one the route accepts: checked by the route's
        own plan (unknown and control-character parameters, then each value by FastAPI's field
        for it), so the values are the ones the full app would pass, and any 422 is its."""
        plan = self._list_plan
        if plan is None:
            return None
        request = Request(scope)
        query = self._list_query(plan, request)
        if query is None:
            return None
        db: Database = self.state.db

        async def listing(context: AuthContext) -> Response:
            return await contacts.list_contacts(request, context, db, **query)

        return listing

    def _list_query(self, plan: Plan, request: Request) -> dict[str, Any] | None:
        """The plan's arguments for the request's query; None if the plan refuses it.

        Kept per query string: the plan's check and FastAPI's fields took ~15-30 µs a page
        (bench/commentary.md, 190) to give what depends on the query string alone (the list
        route has no path parameter; its values are numbers, strings and None, never changed
        by the handler, which gets them as keywords). A refused query is not kept: the full app
        answers it. Up to ``_LIST_QUERIES`` strings; more empty the cache, so a client walking
        cursors (a new string each page) costs what the plan costs."""
        query_string: bytes = request.scope.get("query_string", b"")
        query = self._list_queries.get(query_string)
        if query is not None:
            return query
        try:
            query = plan.query_arguments(request)
        except Exception:
            return None
        return remember(self._list_queries, query_string, query, limit=_LIST_QUERIES)

    @cached_property
    def _list_plan(self) -> Plan | None:
        """The plan of the route the full app runs for ``GET /v1/contacts``."""
        return next(
            (
                route.plan
                for route in contacts.router.routes
                if isinstance(route, DirectRoute)
                and route.path == _CONTACTS
                and route.methods == {"GET"}
                and route.endpoint is contacts.list_contacts
            ),
            None,
        )

    def _reading(self, contact_id: str) -> Answer:
        db: Database = self.state.db

        async def read(context: AuthContext) -> Response:
            return await contacts.found(db, context.account_id, contact_id)

        return read

    async def _answer(
        self,
        scope: Scope,
        send: Send,
        hot: _Hot,
        context: AuthContext,
        limit: RateLimitState,
        answer: Answer,
        started: float,
    ) -> None:
        """From the rate-limit charge on, everything is answered here, as the full app does."""
        self.answered += 1
        scope["app"] = self.owner  # as Starlette sets it: background tasks find the app by it
        request_id = request_id_for(hot.client_request_id)
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["account_id"] = context.account_id
        policy: bytes = self.state.rate_limiter.policy_header
        trailer = [(b"x-request-id", request_id.encode()), *limit.headers(policy)]
        status = 500
        sent = False
        try:
            status, headers, body = await self._respond(scope, context, answer, limit)
            sent = True  # from here on, a failure is the transport's: nothing else can be said
            await _send_whole(send, status, [*headers, *trailer], body)
        except Exception as exc:
            if sent:
                raise
            # As RequestContext answers it: a complete answer keeps the connection usable.
            error = error_for_unexpected(exc, scope["method"], scope["path"])
            status = error.status_code
            headers, body = error_message(error, request_id, close=False)
            await _send_whole(send, status, [*headers, *trailer], body)
        finally:
            log_request(scope, state, status, started)
            observe_request(scope["method"], hot.route, status, started)

    async def _respond(
        self, scope: Scope, context: AuthContext, answer: Answer, limit: RateLimitState
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        request_id: str = scope["state"]["request_id"]
        if not limit.allowed:
            response: Response = error_json(over_budget(limit), request_id)
        else:
            remember_use(scope, self.state.db, context)
            try:
                response = await answer(context)
            except ApiError as error:
                response = error_json(error, request_id)
        return response.status_code, list(response.raw_headers), bytes(response.body)
