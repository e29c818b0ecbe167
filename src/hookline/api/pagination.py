"""Cursor pagination: lists are newest first; the next page's URL goes in a ``Link`` header."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

import orjson
from fastapi import Query, Request

from hookline.api.responses import JSONResponse
from hookline.caches import remember

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
    return f'<{_NEXT_URLS.next_url(request, limit, encode_cursor(last_id))}>; rel="next"'


def _starlette_next_url(request: Request, params: dict[str, str]) -> str:
    """The request's URL with ``params`` as its query, as Starlette spells it."""
    return str(request.url.replace_query_params(**params))


def _next_params(request: Request, limit: int, cursor: str) -> dict[str, str]:
    """The next page's query: the request's own, without ``offset``, with ``limit`` and
    ``cursor`` (in their places if the request had them)."""
    params = dict(request.query_params)
    params.pop("offset", None)
    params["limit"] = str(limit)
    params["cursor"] = cursor
    return params


# Characters quote_plus leaves as they are (urllib.parse's always-safe set): a cursor of these
# alone is written into the URL unchanged, so it can go into a template's slot.
_URL_SAFE = re.compile(r"[A-Za-z0-9_.~-]+")
# Stands for the cursor while a template is made; URL-safe, so urlencode writes it unchanged.
_CURSOR_SLOT = "~hookline.cursor.slot~"
_REMEMBERED = 256
"""Entries per cache (hosts and paths; query strings): a client that varies them only makes
them misses, each at the cost of the spelling it replaces."""


class _NextUrls:
    """The next page's URL, as ``request.url.replace_query_params`` spells it, without
    Starlette parsing the request's URL and rebuilding it per page.

    Parsing and rebuilding (``URL`` from the scope, ``urlsplit``, ``urlencode``,
    ``urlunsplit``) was a large share of a list page's CPU. The URL is the request's with its
    query replaced: ``base?query``. The base (scheme,
    host, path) depends only on the scope's scheme, server, path and first Host header, so it
    is kept per those; the query depends only on the request's query string and the limit, so
    it is kept per those as a template with a slot for the cursor. Both are made by the very
    spelling they replace (Starlette's ``URL``, ``urlencode``), the first time a key is seen.
    What they cannot stand for takes that spelling every time: a query string with ``#``
    (Starlette reads what follows as a fragment, which it keeps after the new query) or not
    ASCII (Starlette decodes it as UTF-8, the query parameters as Latin-1), a cursor that
    urlencode would escape, a query whose own parameters hold the slot's text.
    ``tests/api/test_pagination.py`` holds the two to the same text for any scope."""

    def __init__(self) -> None:
        self._bases: dict[tuple[Any, ...], str | None] = {}
        self._queries: dict[tuple[bytes, int], tuple[str, str] | None] = {}

    def next_url(self, request: Request, limit: int, cursor: str) -> str:
        scope = request.scope
        query_string: bytes = scope.get("query_string", b"")
        if b"#" in query_string or not query_string.isascii() or not _URL_SAFE.fullmatch(cursor):
            return _starlette_next_url(request, _next_params(request, limit, cursor))
        base = self._base(request)
        query = self._query(request, query_string, limit)
        if base is None or query is None:
            return _starlette_next_url(request, _next_params(request, limit, cursor))
        head, tail = query
        return f"{base}?{head}{cursor}{tail}"

    def _base(self, request: Request) -> str | None:
        """The request's URL before its query, or None if Starlette's has a fragment."""
        scope = request.scope
        server = scope.get("server")
        key = (
            scope.get("scheme", "http"),
            None if server is None else tuple(server),
            scope["path"],
            _first_host(scope["headers"]),
        )
        if key in self._bases:
            return self._bases[key]
        url = request.url
        # urlunsplit writes the base, then "?" and the query, then "#" and any fragment.
        base = None if url.fragment else str(url.replace(query=""))
        return remember(self._bases, key, base, limit=_REMEMBERED)

    def _query(self, request: Request, query_string: bytes, limit: int) -> tuple[str, str] | None:
        """The next page's query before and after its cursor."""
        key = (query_string, limit)
        if key in self._queries:
            return self._queries[key]
        params = _next_params(request, limit, _CURSOR_SLOT)
        # As replace_query_params encodes them.
        query = urlencode([(str(name), str(value)) for name, value in params.items()])
        head, slot, tail = query.partition(_CURSOR_SLOT)
        template = (head, tail) if slot and _CURSOR_SLOT not in tail else None
        return remember(self._queries, key, template, limit=_REMEMBERED)


def _first_host(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    # Starlette's URL reads the first Host header.
    for name, value in headers:
        if name == b"host":
            return value
    return None


_NEXT_URLS = _NextUrls()
