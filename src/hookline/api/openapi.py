"""OpenAPI helpers: every operation documents the contract's error body for its error statuses."""

from __future__ import annotations

from typing import Any

from hookline.schemas.common import ErrorOut

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
