"""Cursor pagination: lists are newest first; the next page's URL goes in a ``Link`` header."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Any

from fastapi import Query, Request, Response

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
    request: Request, response: Response, rows: list[dict[str, Any]], limit: int
) -> list[dict[str, Any]]:
    """Trim the ``limit + 1`` rows fetched to ``limit`` and set ``Link`` when more exist."""
    if len(rows) <= limit:
        return rows
    rows = rows[:limit]
    set_next_link(request, response, limit, rows[-1]["id"])
    return rows


def set_next_link(request: Request, response: Response, limit: int, last_id: str) -> None:
    params = dict(request.query_params)
    params.pop("offset", None)
    params["limit"] = str(limit)
    params["cursor"] = encode_cursor(last_id)
    next_url = request.url.replace_query_params(**params)
    response.headers["Link"] = f'<{next_url}>; rel="next"'
