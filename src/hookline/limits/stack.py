"""Installs the limits middleware around ``RequestContext`` and documents them in OpenAPI.

Outermost first, the stack is::

    MetricsMiddleware      every response counted, refusals included
    RateLimitMiddleware    RateLimit headers on every /v1 response; per-address budget
    RequestContext         request id, 64 KiB body limit, access log   (api.middleware)
    BodyGuard              buffers the body (so an oversized one stays a 413); JSON depth <= 32
                           (api.body, added by app.py: HTTP-layer middleware)
    (FastAPI: routes; authenticate() charges the per-key budget; Idempotency-Key on POST /v1/...
    is a guard around each endpoint, inside its authorisation and its transaction:
    guards.idempotency, applied by api.routing.DirectRoute)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from hookline import metrics
from hookline.guards.idempotency import MAX_KEY_LENGTH
from hookline.guards.ratelimit import RateLimiter, RateLimitMiddleware
from hookline.settings import Settings


def add_request_guards(app: FastAPI) -> None:
    """Call before adding ``RequestContext``, after ``api.body.BodyGuard``: documents the
    Idempotency-Key guard that ``api.routing.DirectRoute`` applies inside it."""
    _document_idempotency(app)


def add_response_observers(app: FastAPI, settings: Settings) -> None:
    """Call after adding ``RequestContext``: these wrap it and see every response."""
    app.state.rate_limiter = RateLimiter(settings)
    app.add_middleware(RateLimitMiddleware)
    app.add_middleware(metrics.MetricsMiddleware)


_IDEMPOTENCY_PARAMETER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": (
        "Makes a retry safe: the same key with the same body within 24 h replays the first "
        "response (with `Idempotent-Replayed: true`), once the key is authorised for this "
        "operation as a fresh request would be; with another body it is refused (422 "
        "idempotency_key_reused); while the first is still running, 409."
    ),
    "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH},
}
_IN_FLIGHT = {
    "description": "conflict: the request with this Idempotency-Key is still in progress",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
}


def _link_created_resource(paths: dict[str, Any], collection: str, post: dict[str, Any]) -> None:
    """OpenAPI links from ``POST /v1/things`` (201) to ``/v1/things/{thing_id}`` operations, so
    clients and stateful fuzzers know the new ``id`` feeds them."""
    created = post.get("responses", {}).get("201")
    if created is None:
        return
    prefix = collection + "/{"
    for item_path, operations in paths.items():
        if not item_path.startswith(prefix) or "/" in item_path[len(prefix) :]:
            continue
        parameter = item_path[len(prefix) : -1]
        for method, operation in operations.items():
            if "operationId" not in operation:
                continue
            created.setdefault("links", {})[f"{method}_{operation['operationId']}"] = {
                "operationId": operation["operationId"],
                "parameters": {parameter: "$response.body#/id"},
            }


def _document_idempotency(app: FastAPI) -> None:
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = generate()
        for path, operations in schema.get("paths", {}).items():
            post = operations.get("post")
            if post is None or not path.startswith("/v1/"):
                continue
            post.setdefault("parameters", []).append(dict(_IDEMPOTENCY_PARAMETER))
            post.setdefault("responses", {}).setdefault("409", _IN_FLIGHT)
            _link_created_resource(schema["paths"], path, post)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
