"""Paginated lists on SQLite and PostgreSQL: each page is the response itself (no response-model
pass), so each item must already have exactly its schema's fields and validate against it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from starlette.datastructures import URL
from starlette.requests import Request

from hookline.api.pagination import _next_link, _NextUrls, encode_cursor
from hookline.schemas.calls import CallOut
from hookline.schemas.contacts import ContactOut
from hookline.schemas.deliveries import DeliveryOut
from hookline.schemas.events import EventOut
from hookline.storage.db import Database
from tests.api.test_calls import CALL
from tests.conftest import Account
from tests.support.fanout import fan_out_everything

ADA = {"first_name": "Ada", "phone_number": "+14155552671", "tags": ["vip"]}


def assert_shaped(items: list[dict[str, object]], schema: type[BaseModel]) -> None:
    assert items, "the list should not be empty"
    for item in items:
        assert set(item) == set(schema.model_fields), schema.__name__
        schema.model_validate(item, strict=False)


async def test_every_list_endpoint_returns_its_schema_exactly(
    client: httpx.AsyncClient, account: Account, db: Database
) -> None:
    headers = account.headers
    hook = await client.post(
        "/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        headers=headers,
    )
    assert hook.status_code == 201, hook.text
    for _ in range(3):
        assert (await client.post("/v1/contacts", json=ADA, headers=headers)).status_code == 201
    assert (await client.post("/v1/calls", json=CALL, headers=headers)).status_code == 201
    await fan_out_everything(db)  # the worker's fan-out, run here

    lists: dict[str, type[BaseModel]] = {
        "/v1/contacts?limit=2": ContactOut,
        "/v1/calls": CallOut,
        "/v1/events?limit=2": EventOut,
        f"/v1/webhooks/{hook.json()['id']}/deliveries?limit=2": DeliveryOut,
    }
    for path, schema in lists.items():
        response = await client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.text)
        assert response.headers["content-type"] == "application/json"
        assert_shaped(response.json(), schema)
        if "limit=2" in path:  # three or more exist: a next page
            assert 'rel="next"' in response.headers["link"], path


# --- the next page's URL ---------------------------------------------------------------------


def _starlette_link(request: Request, limit: int, last_id: str) -> str:
    """The ``Link`` as it was spelled before ``_NextUrls``: Starlette's URL rebuilt per page."""
    params = dict(request.query_params)
    params.pop("offset", None)
    params["limit"] = str(limit)
    params["cursor"] = encode_cursor(last_id)
    return f'<{request.url.replace_query_params(**params)}>; rel="next"'


def _link_or_error(link: Callable[..., str], *args: Any) -> str:
    try:
        return link(*args)
    except Exception as exc:  # both ways must fail alike where Starlette's URL fails
        return f"raised {type(exc).__name__}"


_HOSTS = st.sampled_from(
    [
        b"hookline.test",
        b"hookline.test:8000",
        b"127.0.0.1:80",
        b"[::1]:8443",
        b"[::1",
        b"bad host",
        b"a?b",
        b"a#b",
        b"a/b",
        b"",
        b"h\xe9",
        b"x:99999",
    ]
)
_PATHS = st.sampled_from(
    ["/v1/contacts", "/v1/webhooks/wh_1/deliveries", "//v1/events", "/a?b#c\\d", "/caf\xe9", ""]
)
_QUERY_NAMES = st.sampled_from(["limit", "cursor", "offset", "search", "tags", "x y", "~hook"])
_QUERY_VALUES = st.sampled_from(
    ["50", "2", "", "ada", "a+b", "a b", "%2B1", "#frag", "~hookline.cursor.slot~", "\xe9", "&"]
)
_QUERIES = st.lists(st.tuples(_QUERY_NAMES, _QUERY_VALUES | st.text(max_size=4)), max_size=4).map(
    lambda pairs: "&".join(f"{name}={value}" for name, value in pairs).encode()
)
# A fragment (Starlette keeps it after the new query), and text that is not UTF-8.
_ODD_QUERIES = st.sampled_from([b"limit=2#x", b"#", b"search=a#b&limit=3", b"search=\xe9"])
_CURSORS = st.sampled_from(
    ["ct_0190a3b2c4d5e6f7a8b9c0d1e2f3a4b5", "0190a3b2-c4d5-7e6f-8a8b-9c0d1e2f3a4b", "a b", "%", ""]
) | st.text(max_size=6)


def _two(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(values, min_size=1, max_size=2)


@st.composite
def _requests(draw: st.DrawFn) -> list[tuple[dict[str, Any], int, str]]:
    """A run of requests whose parts come from a pool of one or two values each, so that they
    share some of what the cache keys on and differ in the rest."""
    schemes = draw(_two(st.sampled_from(["http", "https"])))
    servers = draw(_two(st.sampled_from([("127.0.0.1", 8000), ("::1", 443), ("10.0.0.1", 80)])))
    paths = draw(_two(_PATHS))
    queries = draw(_two(_QUERIES | st.binary(max_size=8) | _ODD_QUERIES))
    hosts = draw(_two(st.lists(_HOSTS, max_size=2)))
    limits = draw(_two(st.integers(1, 100)))
    run = []
    for _ in range(draw(st.integers(1, 8))):
        scope = {
            "type": "http",
            "method": "GET",
            "scheme": draw(st.sampled_from(schemes)),
            "server": draw(st.sampled_from([*servers, None])),
            "path": draw(st.sampled_from(paths)),
            "query_string": draw(st.sampled_from(queries)),
            "headers": [(b"accept", b"*/*"), *((b"host", h) for h in draw(st.sampled_from(hosts)))],
        }
        run.append((scope, draw(st.sampled_from(limits)), draw(_CURSORS)))
    return run


def _after_a_plain_query(query: bytes) -> list[tuple[dict[str, Any], int, str]]:
    """``query`` after a query that leaves its URL's base (scheme, host, path) in the cache."""
    scope = {
        "type": "http",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "path": "/v1/contacts",
        "headers": [(b"host", b"hookline.test")],
    }
    return [({**scope, "query_string": q}, 2, "ct_1") for q in (b"limit=2", query)]


@settings(max_examples=400)
@given(requests=_requests())
@example(requests=_after_a_plain_query(b"limit=2#x"))
@example(requests=_after_a_plain_query(b"limit=2&search=\xe9"))
def test_the_next_link_is_starlettes_url_for_any_request(
    requests: list[tuple[dict[str, Any], int, str]],
) -> None:
    """One cache for a run of requests (so later ones read what earlier ones left): every
    ``Link`` is the text Starlette's URL gives, or both fail alike."""
    links = _NextUrls()
    for scope, limit, cursor in requests:
        expected = _link_or_error(_starlette_link, Request(scope), limit, cursor)
        url = _link_or_error(links.next_url, Request(scope), limit, encode_cursor(cursor))
        got = url if url.startswith("raised") else f'<{url}>; rel="next"'
        assert got == expected, scope


def test_a_second_page_of_the_same_query_rebuilds_no_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is what spells the ``Link``: with Starlette's URL out of the way, the next
    pages of a query already seen (any cursor) still get theirs (fails where each page
    rebuilds the URL)."""
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "path": "/v1/contacts",
        "query_string": b"limit=50&search=ada+b&offset=3",
        "headers": [(b"host", b"hookline.test")],
    }
    first, second = "0190a3b2-c4d5-7e6f-8a8b-9c0d1e2f3a4b", "0190a3b2-c4d5-7e6f-8a8b-000000000000"
    expected = _starlette_link(Request(scope), 50, second)
    assert _next_link(Request(scope), 50, first) == _starlette_link(Request(scope), 50, first)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the URL was parsed and rebuilt")

    monkeypatch.setattr(URL, "__init__", refused)
    assert _next_link(Request(scope), 50, second) == expected
    assert expected == (
        "<http://hookline.test/v1/contacts?limit=50&search=ada+b&cursor=" + second + '>; rel="next"'
    )
