"""Typed dependencies: ``DB``, ``Settings``, and scoped ``AuthContext`` aliases."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from operator import attrgetter
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.types import Scope

from hookline.background import spawn
from hookline.domain import keys
from hookline.domain.keys import AuthContext
from hookline.errors import Forbidden, Unauthenticated, UnsupportedMediaType
from hookline.guards.ratelimit import RateLimiter, charge_key
from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.timeutil import utcnow

# last_used_at is a hint for people, not an audit log: write it at most once a minute per key.
LAST_USED_RESOLUTION = timedelta(minutes=1)


# Dependencies are ``async def``: FastAPI runs a plain ``def`` dependency on a worker thread,
# a hand-off that costs more than the dependency itself (see docs/benchmarks.md).
async def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


DB = Annotated[Database, Depends(get_db)]
AppSettings = Annotated[Settings, Depends(get_settings)]


def bearer_token(header: str | None) -> str:
    """The key of an ``Authorization: Bearer <key>`` header; 401 for anything else."""
    if not header:
        raise Unauthenticated("Missing Authorization header; send 'Authorization: Bearer <key>'.")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("Authorization must be 'Bearer <key>'.")
    return token.strip()


@dataclass(frozen=True, slots=True)
class Services:
    """The app's parts a route's runner hands its steps (the key's look-up, its rate limit, the
    ``DB`` and ``AppSettings`` parameters): the front door reads them from ``app.state`` once
    per lifespan, not once per request."""

    db: Database
    settings: Settings
    limiter: RateLimiter | None

    @classmethod
    def of(cls, app: Any) -> Services:
        # An app without some part (a test's bare FastAPI app) runs the routes that need none.
        state = app.state
        db: Any = getattr(state, "db", None)
        settings: Any = getattr(state, "settings", None)
        return cls(db, settings, getattr(state, "rate_limiter", None))


_FROM_SERVICES: dict[object, Callable[[Services], Any]] = {
    get_db: attrgetter("db"),
    get_settings: attrgetter("settings"),
}


def service_of(dependency: object) -> Callable[[Services], Any] | None:
    """How the runner reads a dependency that only hands over an app part (``DB``, ...)."""
    return _FROM_SERVICES.get(dependency)


async def authenticate(scope: Scope, authorization: str | None, services: Services) -> AuthContext:
    """The request's key, its rate limit charged; kept in the request's state (the
    Idempotency-Key guard reads the account from it, the access log the account id)."""
    state: dict[str, Any] = scope.setdefault("state", {})
    cached: AuthContext | None = state.get("auth_context")
    if cached is not None:
        return cached
    token = bearer_token(authorization)
    db = services.db
    # keys.authenticate refuses a malformed key without a look-up; telling the two refusals
    # apart costs a second check only on the error path.
    context = await keys.authenticate(db, token)
    if context is None:
        raise Unauthenticated(_why_refused(token))
    state["account_id"] = context.account_id
    await charge_key(state, services.limiter, context)
    state["auth_context"] = context
    remember_use(scope, db, context)
    return context


def _why_refused(token: str) -> str:
    if not keys.has_key_shape(token):
        return f"This is not a hookline API key (expected hl_live_..., {keys.KEY_LENGTH} chars)."
    if not keys.is_well_formed(token):
        return (
            "This API key's checksum does not match: a character was mistyped or changed. "
            "Copy the key again."
        )
    return "This API key is unknown or was revoked."


def remember_use(scope: Scope, db: Database, context: AuthContext) -> None:
    """Write the key's ``last_used_at`` after the response, at most once a minute."""
    now = utcnow()
    if context.last_used_at is not None and now - context.last_used_at < LAST_USED_RESOLUTION:
        return

    async def touch() -> None:
        async with db.begin() as conn:
            await keys.touch_last_used(conn, context.key_id, now)

    spawn(Request(scope), touch())


@dataclass(frozen=True, slots=True)
class KeyRule:
    """A route's key rule: the key (401), its rate limit (429), then one of ``scopes`` (403;
    none: any valid key). Declared once, by the auth parameter's type (``ContactsWrite``, ...),
    it is the route's metadata (``api.routing.DirectRoute.scopes``), and the route runner runs
    it first."""

    scopes: tuple[str, ...]
    """Any one of them will do; empty: any valid key."""
    refusal: str
    """The 403's message."""

    def allow(self, context: AuthContext) -> None:
        """Forbidden unless the key holds one of the rule's scopes."""
        held = context.scopes
        for scope in self.scopes:
            if scope in held:
                return
        if self.scopes:
            raise Forbidden(self.refusal)


_KEY_RULES: dict[object, KeyRule] = {}


def key_rule_of(dependency: object) -> KeyRule | None:
    """The rule of a dependency ``require`` made; None for any other."""
    return _KEY_RULES.get(dependency)


KeyCheck = Callable[[Request], Awaitable[AuthContext]]


def _key_check(rule: KeyRule, name: str) -> KeyCheck:
    """The dependency declaring ``rule``; the route runner runs the rule itself."""

    async def check(request: Request) -> AuthContext:
        headers = request.headers
        context = await authenticate(
            request.scope, headers.get("authorization"), Services.of(request.app)
        )
        rule.allow(context)
        return context

    check.__name__ = name
    _KEY_RULES[check] = rule
    return check


def require(scope: str | None) -> KeyCheck:
    """The dependency of a key with ``scope`` (None: any valid key)."""
    rule = KeyRule((scope,) if scope else (), f"This API key lacks the '{scope}' scope.")
    return _key_check(rule, f"require_{(scope or 'key').replace(':', '_')}")


def require_any(scopes: tuple[str, ...], refusal: str) -> KeyCheck:
    """The dependency of a key holding at least one of ``scopes``; ``refusal`` is the 403's
    message, which names them."""
    name = "require_any_of_" + "_".join(s.replace(":", "_") for s in scopes)
    return _key_check(KeyRule(scopes, refusal), name)


ContactsRead = Annotated[AuthContext, Depends(require("contacts:read"))]
ContactsWrite = Annotated[AuthContext, Depends(require("contacts:write"))]
CallsRead = Annotated[AuthContext, Depends(require("calls:read"))]
CallsWrite = Annotated[AuthContext, Depends(require("calls:write"))]
WebhooksRead = Annotated[AuthContext, Depends(require("webhooks:read"))]
WebhooksWrite = Annotated[AuthContext, Depends(require("webhooks:write"))]
AnyKey = Annotated[AuthContext, Depends(require(None))]


async def require_json(request: Request) -> None:
    """Bodies must be JSON; checked before the body is parsed so the answer is a clear 415."""
    if not is_json_media(request.headers.get("content-type", "")):
        raise UnsupportedMediaType()


def is_json_media(content_type: str) -> bool:
    media_type = content_type.split(";")[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


# Declared after the auth parameter so a bad key is a 401 before a bad body is a 415.
JsonContent = Annotated[None, Depends(require_json)]
