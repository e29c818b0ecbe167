"""OpenAPI helpers: every operation documents the contract's error body for its error statuses,
every input rule the server enforces is in the document (``document_input_rules``), and every
``/v1`` operation the key it needs (``document_security``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from hookline import ids
from hookline.api.routing import direct_routes
from hookline.domain.validation import NOT_BLANK_PATTERN, TEXT_PATTERN
from hookline.guards.idempotency import MAX_KEY_LENGTH
from hookline.schemas.common import JSON_VALUE, JSON_VALUE_SCHEMA, ErrorOut

_DESCRIPTIONS = {
    400: "invalid_json: the body is not a JSON object",
    401: "unauthenticated: key missing, malformed, unknown or revoked",
    403: "forbidden: the key lacks the scope",
    404: "not_found: unknown id, or an id of another account",
    409: "conflict: the resource's state forbids this, or the idempotent request is in flight",
    413: "payload_too_large: body over 64 KiB",
    415: "unsupported_media_type: body is not application/json",
    422: "validation_error (details.fields lists each field) or idempotency_key_reused",
    429: "rate_limited: retry after Retry-After seconds",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    wanted = sorted({*statuses, 422, 429})
    responses: dict[int | str, dict[str, Any]] = {
        status: {"model": ErrorOut, "description": _DESCRIPTIONS[status]} for status in wanted
    }
    responses[500] = {"model": ErrorOut, "description": "internal_error"}
    return responses


def document_input_rules(app: FastAPI) -> None:
    """Puts the rules enforced outside FastAPI's parameters into the OpenAPI document: the shape
    of each path id (``api.routing`` answers 404 to anything else), no control characters in
    query text (422), and the JSON value a call's ``metadata`` may hold."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for parameter in operation.get("parameters", ()):
                    _constrain(parameter)
        schema.setdefault("components", {}).setdefault("schemas", {})[JSON_VALUE] = (
            JSON_VALUE_SCHEMA
        )
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _constrain(parameter: dict[str, Any]) -> None:
    schema = parameter.get("schema", {})
    if parameter.get("in") == "path":
        schema["pattern"] = ids.pattern_of(parameter["name"])
    elif parameter.get("in") == "header" and parameter["name"] == "Idempotency-Key":
        schema.setdefault("pattern", NOT_BLANK_PATTERN)  # a blank key is refused (422)
    elif parameter.get("in") == "query":
        for option in schema.get("anyOf", [schema]):
            if option.get("type") == "string" and "enum" not in option:
                option.setdefault("pattern", TEXT_PATTERN)


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


def document_idempotency(app: FastAPI) -> None:
    """The ``Idempotency-Key`` header, its 409 and the links to a created resource, on every
    ``POST /v1/...`` (the route runner applies the guard to each of them)."""
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


BEARER_AUTH = "bearerAuth"
_BEARER_SCHEME = {"type": "http", "scheme": "bearer", "description": "An API key, hl_live_..."}


def document_security(app: FastAPI) -> None:
    """Bearer auth, and on each API operation the scopes its route's key needs, taken from the
    route's one declaration (``DirectRoute.scopes``): /docs then has an Authorize button, and
    the clients know every call takes a key. Routes outside the API declare none."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = generate()
        schema.setdefault("components", {}).setdefault("securitySchemes", {})[BEARER_AUTH] = dict(
            _BEARER_SCHEME
        )
        paths = schema.get("paths", {})
        for route in direct_routes(app.router.routes):
            if not route.needs_key:
                continue
            for method in route.methods or ():
                operation = paths.get(route.path_format, {}).get(method.lower())
                if operation is not None:
                    _require_key(operation, route.scopes)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def _require_key(operation: dict[str, Any], scopes: tuple[str, ...]) -> None:
    operation["security"] = [{BEARER_AUTH: list(scopes)}]
    rule = scope_rule(scopes)
    described = operation.get("description")
    operation["description"] = f"{rule}\n\n{described}" if described else rule


def scope_rule(scopes: tuple[str, ...]) -> str:
    """The key an operation needs, in words, as its description starts."""
    names = ", ".join(f"`{scope}`" for scope in scopes)
    if not scopes:
        return "Requires an API key (any scope)."
    if len(scopes) == 1:
        return f"Requires scope {names}."
    return f"Requires one of the scopes {names}."
