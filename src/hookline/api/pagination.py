"""Cursor pagination: lists are newest first; the next page's URL goes in a ``Link`` header."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Query, Request

from hookline.api.responses import JSONResponse
from hookline.errors import ValidationFailed

_CURSOR = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_DECODED = re.compile(r"^[A-Za-z0-9_-]{1,100}$")

LimitQuery = Annotated[int, Query(ge=1, le=100, description="Page size, 1..100.")]
CursorQuery = Annotated[
    str | None, Query(description="Opaque cursor from the previous page's Link header.")
]


def encode_cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(last_id.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        if not _CURSOR.match(cursor):
            raise ValueError(cursor)
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = base64.urlsafe_b64decode(padded.encode()).decode()
        if not _DECODED.match(decoded):
            raise ValueError(decoded)
        return decoded
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationFailed.for_field(
            "cursor", "cursor is not valid; use the Link header's URL"
        ) from None


def page(
    request: Request,
    rows: list[dict[str, Any]],
    limit: int,
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> JSONResponse:
    """The response for ``limit + 1`` rows fetched: the first ``limit`` (each through ``shape``)
    and, when more exist, ``Link`` to the next page."""
    more = len(rows) > limit
    rows = rows[:limit]
    items = [shape(row) for row in rows] if shape is not None else rows
    return page_response(request, items, limit, rows[-1]["id"] if more else None)


def page_response(
    request: Request, items: list[dict[str, Any]], limit: int, last_id: str | None
) -> JSONResponse:
    """A page as the response itself. The items are already built in their ``...Out`` schema's
    shape, so FastAPI's response-model validation, ~10% of a page's CPU, is skipped
    (tests/api/test_pagination.py holds every list endpoint to its schema's fields)."""
    response = JSONResponse(items)
    if last_id is not None:
        response.headers["Link"] = _next_link(request, limit, last_id)
    return response


def _next_link(request: Request, limit: int, last_id: str) -> str:
    params = dict(request.query_params)
    params.pop("offset", None)
    params["limit"] = str(limit)
    params["cursor"] = encode_cursor(last_id)
    next_url = request.url.replace_query_params(**params)
    return f'<{next_url}>; rel="next"'
