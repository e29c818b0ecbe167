"""Cursor pagination: lists are newest first; the next page's URL goes in a ``Link`` header."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import orjson
from fastapi import Query, Request

from hookline.api.responses import JSONResponse

# Shared with the dashboard (schemas.cursors); re-exported for the API's list endpoints.
from hookline.schemas.cursors import CURSOR_PATTERN as CURSOR_PATTERN
from hookline.schemas.cursors import decode_cursor as decode_cursor
from hookline.schemas.cursors import encode_cursor as encode_cursor

MAX_OFFSET = 1_000_000

LimitQuery = Annotated[int, Query(ge=1, le=100, description="Page size, 1..100.")]
CursorQuery = Annotated[
    str | None,
    Query(
        description="Opaque cursor from the previous page's Link header.",
        json_schema_extra={"pattern": CURSOR_PATTERN},
    ),
]
OffsetQuery = Annotated[
    int | None,
    Query(
        ge=0,
        le=MAX_OFFSET,
        description="Items to skip (for clients written against offsets); ignored with `cursor`. "
        "The `Link` header's cursor is cheaper and stable while items are added.",
    ),
]


def skipped(cursor: str | None, offset: int | None) -> int | None:
    """The offset to apply: a cursor already says where the page starts."""
    return None if cursor else offset


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
    request: Request,
    items: Sequence[Mapping[str, Any] | orjson.Fragment],
    limit: int,
    last_id: str | None,
) -> JSONResponse:
    """A page as the response itself. The items are already built in their ``...Out`` schema's
    shape, so FastAPI's response-model validation, ~10% of a page's CPU, is skipped
    (tests/api/test_pagination.py holds every list endpoint to its schema's fields). An item is
    that shape's dict, or its JSON text already written (an ``orjson.Fragment``, which orjson
    writes as it is: the SQLite contacts page)."""
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
