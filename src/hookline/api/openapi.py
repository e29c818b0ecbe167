"""OpenAPI helpers: every operation documents the contract's error body for its error statuses,
and every input rule the server enforces is in the document (``document_input_rules``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from hookline import ids
from hookline.domain.validation import NOT_BLANK_PATTERN, TEXT_PATTERN
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
