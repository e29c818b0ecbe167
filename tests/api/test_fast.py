"""``api.fast.FastPath``: the same answers as the full app, on both backends.

Two apps share one database: one with the fast path (the default), one with
``HOOKLINE_FAST_PATH=false``. Every request, hypothesis-generated and bad ones included, goes to
both, and their answers are compared after replacing what is new per request (ids, timestamps,
a generated request id, the seconds of ``RateLimit``'s ``t``): status, every header in order,
the body, the access-log line and the metrics sample. A property that both apps answer alike
would also hold if the fast path never answered anything, so the fast app counts what it
answered itself, and the tests insist that it answered the hot requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sqlite3
import uuid
from collections.abc import Coroutine, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

import asyncpg
import httpx
import orjson
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY
from starlette.requests import Request as StarletteRequest

from hookline.api.routing import Plan
from hookline.app import create_app
from hookline.domain import contacts, keys
from hookline.domain.events import list_events
from hookline.settings import Settings
from tests.conftest import make_database_url, make_settings, new_account

T = TypeVar("T")
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_RESET = re.compile(rb";t=\d+")
ADA = {"first_name": "Ada", "phone_number": "+14155552671"}


@dataclass
class Pair:
    """The fast and the full app on one database, run on a loop of their own."""

    runner: asyncio.Runner
    fast: FastAPI
    full: FastAPI
    keys: dict[str, str] = field(default_factory=dict)
    owner_id: str = ""
    contact_ids: dict[str, str] = field(default_factory=dict)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coro)

    def answered(self) -> int:
        count: int = self.fast.state.fast_path.answered
        return count


def _apps(base: Settings) -> tuple[FastAPI, FastAPI]:
    fast = create_app(base)
    full = create_app(base.model_copy(update={"fast_path": False}))
    return fast, full


@pytest.fixture(scope="module")
def pair(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Pair]:
    yield from _pair(make_database_url(backend, tmp_path_factory.mktemp("fast"), request))


def _pair(url: str, rate_limit: str = "1000000/day") -> Iterator[Pair]:
    """A budget of a day: both apps' remaining budgets (RateLimit's r) compare exactly, where
    a window of a second would slide between the two requests."""
    base = make_settings(url, rate_limit=rate_limit)
    with asyncio.Runner() as runner:
        stack = AsyncExitStack()
        fast, full = _apps(base)
        for app in (fast, full):
            runner.run(stack.enter_async_context(app.router.lifespan_context(app)))
        pair = Pair(runner, fast, full)
        runner.run(_seed(pair))
        try:
            yield pair
        finally:
            runner.run(stack.aclose())


async def _seed(pair: Pair) -> None:
    db = pair.fast.state.db
    owner = await new_account(db, "owner")
    reader = await new_account(db, "reader", ["contacts:read"])
    stranger = await new_account(db, "stranger")
    async with db.begin() as conn:
        revoked, record = await keys.create_key(conn, owner.id, "revoked")
        await keys.revoke_key(conn, owner.id, record["id"])
    pair.keys.update(owner=owner.key, reader=reader.key, revoked=revoked)
    pair.owner_id = owner.id
    # Written directly: no request spends either app's rate-limit budget before the tests.
    for name, account in (("own", owner), ("strangers", stranger)):
        async with db.begin() as conn:
            contact = await contacts.create_contact(conn, account.id, dict(ADA))
        pair.contact_ids[name] = contact["id"]
    # A few more, so that small pages have a next page (Link) and the filters find something.
    async with db.begin() as conn:
        for number, tags in enumerate([["vip"], ["vip", "new"], [], ["new"]]):
            await contacts.create_contact(
                conn,
                owner.id,
                {**ADA, "email": f"ada{number}@example.com", "tags": tags, "notes": "x" * number},
            )


async def _send(
    app: FastAPI, method: str, path: str, headers: list[tuple[str, str]], body: Any
) -> httpx.Response:
    # json, not orjson: it writes integers past 64 bits, which a client may send.
    content = body if isinstance(body, bytes) else None if body is None else json.dumps(body)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as client:
        return await client.request(method, path, headers=headers, content=content)


# --- what a request is made of ---------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", " ", "Ada\x00", "a\x1fb", "x" * 300, "+14155552671", "ada@example.com"]
)
_value = (
    _text | st.none() | st.integers(-(2**70), 2**70) | st.booleans() | st.lists(_text, max_size=3)
)
_contact = st.fixed_dictionaries(
    {"first_name": _text | st.just("Ada"), "phone_number": _text | st.just("+14155552671")},
    optional={
        "last_name": _value,
        "email": _value,
        "company": _value,
        "tags": _value,
        "notes": _value,
        "id": _value,
        "unknown": _value,
    },
)
_changes = st.fixed_dictionaries(
    {},
    optional={
        name: _value
        for name in ("first_name", "last_name", "phone_number", "email", "tags", "notes", "id")
    },
)
_body = (
    _contact
    | _changes
    | st.just(ADA)
    | st.sampled_from(
        [
            b"",
            b"{",
            b"null",
            b"[]",
            b'"Ada"',
            b"\xff\xfe",
            b'{"first_name": "Ada", "phone_number": "+14155552671",}',
            b"[" * 40 + b"]" * 40,
            b'{"first_name": "Ada", "phone_number": "+14155552671", "tags": '
            + b"[" * 33
            + b"]" * 33
            + b"}",
        ]
    )
    | st.none()
)
_AUTH = ["owner", "reader", "revoked", "missing", "malformed", "basic", "lowercase", "twice"]
_CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON",
    "application/merge-patch+json",
    "text/plain",
    None,
    "twice",
]
_TARGETS = [
    ("POST", "/v1/contacts"),
    ("POST", "/v1/contacts/"),
    ("POST", "/v1/contacts?x=1"),
    ("GET", "{own}"),
    ("GET", "{strangers}"),
    ("GET", "{own}?limit=1"),
    ("GET", "/v1/contacts/00000000-0000-7000-8000-000000000000"),
    ("GET", "/v1/contacts/not-an-id"),
    ("GET", "/v1/contacts/%00"),
    ("PATCH", "{own}"),
    ("PATCH", "{strangers}"),
    ("PATCH", "/v1/contacts/not-an-id"),
    ("PUT", "/v1/contacts"),
    ("DELETE", "/v1/contacts"),
]


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    auth: str
    content_type: str | None
    body: Any
    request_id: str | None
    idempotency_key: str | None
    extra: tuple[tuple[str, str], ...]
    query: tuple[str, ...] = ()
    """The list's query, one ``name=value`` each (a value's ``{own}``: that contact's id)."""

    def path(self, pair: Pair) -> str:
        if self.target.startswith("{"):
            name, _, query = self.target[1:].partition("}")
            return f"/v1/contacts/{pair.contact_ids[name]}{query}"
        if self.query:
            query = "&".join(self.query)
            for name, contact_id in pair.contact_ids.items():
                query = query.replace(f"{{{name}}}", contact_id)
            return f"{self.target}?{query}"
        return self.target

    def headers(self, pair: Pair) -> list[tuple[str, str]]:
        owner = pair.keys["owner"]
        auth = {
            "owner": [f"Bearer {owner}"],
            "reader": [f"Bearer {pair.keys['reader']}"],
            "revoked": [f"Bearer {pair.keys['revoked']}"],
            "missing": [],
            "malformed": [f"Bearer {owner[:-1]}x"],
            "basic": ["Basic YTpi"],
            "lowercase": [f"bearer  {owner} "],
            "twice": [f"Bearer {owner}", f"Bearer {owner}"],
        }[self.auth]
        headers = [("authorization", value) for value in auth]
        if self.content_type == "twice":
            headers += [("content-type", "application/json"), ("content-type", "text/plain")]
        elif self.content_type is not None:
            headers.append(("content-type", self.content_type))
        if self.request_id is not None:
            headers.append(("x-request-id", self.request_id))
        if self.idempotency_key == "fresh":
            # A key of its own for each send: both apps share one database, and the second
            # would otherwise get the first one's replay.
            headers.append(("idempotency-key", f"key-{uuid.uuid4()}"))
        elif self.idempotency_key is not None:
            headers.append(("idempotency-key", self.idempotency_key))
        return headers + list(self.extra)


@st.composite
def _requests(draw: st.DrawFn) -> Request:
    method, target = draw(st.sampled_from(_TARGETS))
    return Request(
        method=method,
        target=target,
        auth=draw(st.sampled_from(_AUTH)),
        content_type=draw(st.sampled_from(_CONTENT_TYPES)),
        body=draw(_body),
        request_id=draw(st.sampled_from([None, "req-fixed.1", "has space", "x" * 129])),
        idempotency_key=draw(st.sampled_from([None, None, None, "fresh", "", "k\x7f"])),
        extra=draw(st.sampled_from([(), (("x-filler", "z" * 17000),), (("host", "b.test"),)])),
    )


_HOT_TARGETS = [
    ("POST", "/v1/contacts"),
    ("PATCH", "{own}"),
    ("PATCH", "{strangers}"),
    ("PATCH", "/v1/contacts/00000000-0000-7000-8000-000000000000"),
    ("GET", "{own}"),
    ("GET", "{strangers}"),
    ("GET", "/v1/contacts/00000000-0000-7000-8000-000000000000"),
]


@st.composite
def _hot_requests(draw: st.DrawFn) -> Request:
    """Requests the fast path may answer: a hot route, no unusual header; keys and bodies vary."""
    method, target = draw(st.sampled_from(_HOT_TARGETS))
    json_types = ["application/json", "application/json; charset=utf-8", "application/x+json"]
    return Request(
        method=method,
        target=target,
        auth=draw(st.sampled_from(["owner", "owner", "reader", "revoked"])),
        content_type=draw(st.sampled_from(json_types if method != "GET" else [None, *json_types])),
        body=draw(_changes | _body) if method != "GET" else None,
        request_id=draw(st.sampled_from([None, "req-fixed.1", "has space"])),
        idempotency_key=None,
        extra=(),
    )


_LIST_NAMES = [
    "limit",
    "cursor",
    "offset",
    "search",
    "tags",
    "phone_number",
    "email",
    "unknown",
    "Limit",
    "limit ",
    "",
]
_LIST_VALUES = [
    "1",
    "2",
    "3",
    "50",
    "100",
    "0",
    "-1",
    "101",
    "1.5",
    "abc",
    "",
    " 2",
    "2 ",
    "+2",
    "0x10",
    "1_0",
    "9" * 30,
    "1000000",
    "1000001",
    "Ada\x00",
    "a\x1fb",
    "\x7f",
    "vip",
    "vip,new",
    ",,vip, ",
    "ada",
    "+14155552671",
    "(415) 555-2671",
    "not a phone",
    "ADA0@example.com",
    "x" * 300,
    "{own}",
    "{strangers}",
    "not-an-id",
    "00000000-0000-7000-8000-000000000000",
]
# Written as they come, not encoded again: bad percent-escapes, separators, a name alone.
_RAW_QUERIES = [
    "limit=%ff",
    "%00=1",
    "search=%00",
    "limit",
    "limit=1&&limit=2",
    "limit=2;offset=1",
    "search=%F0%9F%98%80",
    "limit=%2B3",
    "tags=vip&tags=new",
    "cursor={strangers}&limit=1",
    "cursor={own}&offset=1",
    "=",
]


def _encoded(name: str, value: str) -> str:
    return f"{quote(name, safe='')}={quote(value, safe='{}')}"


_list_pair = st.builds(
    _encoded,
    st.sampled_from(_LIST_NAMES),
    st.sampled_from(_LIST_VALUES) | st.text(st.characters(codec="utf-8"), max_size=8),
)
_list_query = st.lists(_list_pair | st.sampled_from(_RAW_QUERIES), max_size=4).map(tuple)


@st.composite
def _list_requests(draw: st.DrawFn, *, usual_head: bool = False) -> Request:
    """``GET /v1/contacts`` with any query; ``usual_head``: keys vary, nothing else unusual."""
    extra: tuple[tuple[str, str], ...] = ()
    if usual_head:
        auth, content_type = draw(st.sampled_from(["owner", "reader", "revoked"])), None
    else:
        auth = draw(st.sampled_from(_AUTH))
        content_type = draw(st.sampled_from(_CONTENT_TYPES))
        extra = draw(st.sampled_from([(), (("x-filler", "z" * 17000),), (("host", "b.test"),)]))
    return Request(
        method="GET",
        target="/v1/contacts",
        auth=auth,
        content_type=content_type,
        body=None,
        request_id=draw(st.sampled_from([None, "req-fixed.1", "has space"])),
        idempotency_key=None,
        extra=extra,
        query=draw(_list_query),
    )


# --- comparing answers -----------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    log: list[dict[str, Any]]
    metrics: dict[tuple[str, str, str], float]


def _normal(value: bytes, generated_id: bytes | None) -> bytes:
    if generated_id:
        value = value.replace(generated_id, b"<request id>")
    return _RESET.sub(b";t=<s>", _TIME.sub(b"<time>", _UUID.sub(b"<uuid>", value)))


def _header_value(name: bytes, value: bytes, status: int, generated_id: bytes | None) -> bytes:
    # A 429's Retry-After counts seconds to a moment: the two answers may straddle a tick.
    if name == b"retry-after" and status == 429:
        return b"<s>"
    return _normal(value, generated_id)


def _requests_counted() -> dict[tuple[str, str, str], float]:
    counts: dict[tuple[str, str, str], float] = {}
    for metric in REGISTRY.collect():
        if metric.name == "hookline_http_requests":
            for sample in metric.samples:
                if sample.name.endswith("_total"):
                    labels = sample.labels
                    counts[(labels["method"], labels["route"], labels["status"])] = sample.value
    return counts


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


_LOGGED = ("request_id", "account_id", "method", "path", "status")


async def _seen(app: FastAPI, request: Request, pair: Pair, sent_id: str | None) -> Seen:
    lines = _Lines()
    access = logging.getLogger("hookline.access")
    access.addHandler(lines)
    level = access.level
    access.setLevel(logging.INFO)
    before = _requests_counted()
    try:
        answer = await _send(
            app, request.method, request.path(pair), request.headers(pair), request.body
        )
    finally:
        access.removeHandler(lines)
        access.setLevel(level)
    after = _requests_counted()
    returned_id = answer.headers.get("x-request-id", "")
    generated = returned_id.encode() if returned_id and returned_id != sent_id else None
    log = [
        {
            name: _normal(str(getattr(r, name, None)).encode(), generated).decode()
            for name in _LOGGED
        }
        for r in lines.records
    ]
    return Seen(
        status=answer.status_code,
        headers=[
            (k, _header_value(k, v, answer.status_code, generated)) for k, v in answer.headers.raw
        ],
        body=_normal(answer.content, generated),
        log=log,
        metrics={k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)},
    )


async def _both(pair: Pair, request: Request) -> tuple[Seen, Seen]:
    full = await _seen(pair.full, request, pair, request.request_id)
    fast = await _seen(pair.fast, request, pair, request.request_id)
    return full, fast


def _assert_alike(full: Seen, fast: Seen) -> None:
    assert fast.status == full.status
    assert fast.headers == full.headers
    assert fast.body == full.body
    assert fast.log == full.log
    assert fast.metrics == full.metrics


EXAMPLES = 80
"""Hypothesis examples per differential test and backend: new ones every run, so CI runs add up
to far more; 200 cost ~70 s of the suite's 10 minutes for little that 80 miss."""


# --- the tests -------------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=_requests() | _list_requests())
def test_any_request_is_answered_exactly_as_the_full_app(pair: Pair, request: Request) -> None:
    full, fast = pair.run(_both(pair, request))
    _assert_alike(full, fast)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=_hot_requests() | _list_requests(usual_head=True))
def test_hot_requests_are_answered_by_the_fast_path_exactly_as_the_full_app(
    pair: Pair, request: Request
) -> None:
    before = pair.answered()
    full, fast = pair.run(_both(pair, request))
    _assert_alike(full, fast)
    # The fast path answers the successes and the unknown contact's 404 itself; every refusal
    # before the handler (401, 403, a bad body's 400/422, a list query the route's plan
    # refuses: unknown, control characters, a value of the wrong type or range) is the full
    # app's. A 422 can be either: a body the schema refuses goes to the full app, a change the
    # handler refuses (a merge-patch nulling a required field, a list's phone number or cursor)
    # is the handler's answer, given by the fast path
    # (``test_a_change_the_handler_refuses_is_answered_by_the_fast_path``,
    # ``test_a_query_the_handler_refuses_is_answered_by_the_fast_path_alike``).
    answered = pair.answered() - before == 1
    if fast.status != 422:
        assert answered == (fast.status in (200, 201, 404))


LISTS = [
    (),
    ("limit=2",),  # a next page: Link
    ("limit=1", "cursor={own}"),  # nothing older than the account's first contact
    ("limit=1", "cursor={strangers}"),  # another account's id: own contacts only
    ("tags=vip", "limit=1"),
    ("search=ada", "offset=1", "limit=100"),
    ("email=ADA1@example.com",),
    ("phone_number=%2B14155552671", "limit=3", "limit=2"),  # a repeat: the last one counts
]


@pytest.mark.parametrize("query", LISTS, ids=lambda q: "&".join(q) or "none")
def test_list_pages_are_answered_by_the_fast_path_alike(pair: Pair, query: tuple[str, ...]) -> None:
    request = Request("GET", "/v1/contacts", "owner", None, None, None, None, (), query)
    before = pair.answered()
    full, fast = pair.run(_both(pair, request))
    assert pair.answered() == before + 1
    _assert_alike(full, fast)
    assert fast.status == 200 and fast.metrics and fast.log
    items = orjson.loads(fast.body)
    links = [value for name, value in fast.headers if name == b"link"]
    if query[-1:] == ("limit=2",):
        assert len(items) == 2 and links and b"cursor=" in links[0]
    if "cursor={own}" in query:
        assert items == []
    assert pair.contact_ids["strangers"].encode() not in fast.body


def test_a_list_query_seen_before_is_not_checked_again(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path keeps the plan's arguments per query string: the second time a query comes,
    only the full app runs the plan (fails where the fast path runs it per request), and the
    answers are still alike, the next page's ``Link`` included."""
    query = ("limit=1", "search=ada", "offset=1")
    request = Request("GET", "/v1/contacts", "owner", None, None, None, None, (), query)
    _assert_alike(*pair.run(_both(pair, request)))
    checked = []
    check = Plan.query_arguments

    def counted(plan: Plan, request: StarletteRequest) -> dict[str, Any]:
        checked.append(request.url.path)
        return check(plan, request)

    monkeypatch.setattr(Plan, "query_arguments", counted)
    before = pair.answered()
    full, fast = pair.run(_both(pair, request))
    _assert_alike(full, fast)
    assert pair.answered() == before + 1
    assert fast.status == 200 and [name for name, _ in fast.headers].count(b"link") == 1
    assert checked == ["/v1/contacts"]  # the full app's


BAD_QUERIES = [
    "limit=0",
    "limit=101",
    "limit=abc",
    "limit=1.5",
    "limit=" + "9" * 30,
    "offset=-1",
    "offset=1000001",
    "search=" + "x" * 201,
    "search=Ada%00",
    "tags=a%1Fb",
    "email=a%01b",
    "unknown=1",
    "Limit=1",
    "limit=1&nope=2&also=3",
    "%00=1",
]


@pytest.mark.parametrize("query", BAD_QUERIES)
def test_a_query_the_route_refuses_is_the_full_apps_422(pair: Pair, query: str) -> None:
    request = Request("GET", "/v1/contacts", "owner", None, None, None, None, (), (query,))
    before = pair.answered()
    full, fast = pair.run(_both(pair, request))
    _assert_alike(full, fast)
    assert fast.status == 422 and b"validation_error" in fast.body
    assert pair.answered() == before  # decided before any side effect: the full app's answer


@pytest.mark.parametrize("query", ["phone_number=not%20a%20phone", "cursor=not%20an%20id"])
def test_a_query_the_handler_refuses_is_answered_by_the_fast_path_alike(
    pair: Pair, query: str
) -> None:
    request = Request("GET", "/v1/contacts", "owner", None, None, None, None, (), (query,))
    before = pair.answered()
    full, fast = pair.run(_both(pair, request))
    _assert_alike(full, fast)
    assert fast.status == 422
    assert pair.answered() == before + 1


def test_a_change_the_handler_refuses_is_answered_by_the_fast_path(pair: Pair) -> None:
    request = Request(
        "PATCH", "{own}", "owner", "application/json", {"first_name": None}, None, None, ()
    )
    before = pair.answered()
    full, fast = pair.run(_both(pair, request))
    _assert_alike(full, fast)
    assert fast.status == 422
    assert pair.answered() - before == 1


HOT = [
    Request("POST", "/v1/contacts", "owner", "application/json", ADA, None, None, ()),
    Request("POST", "/v1/contacts", "owner", "application/json", ADA, "req-1", None, ()),
    Request("GET", "{own}", "owner", None, None, None, None, ()),
    Request("PATCH", "{own}", "owner", "application/json", {"notes": "n"}, None, None, ()),
    Request("PATCH", "{strangers}", "owner", "application/json", {}, None, None, ()),
    Request("GET", "{strangers}", "owner", None, None, "req-2", None, ()),
    Request(
        "GET",
        "/v1/contacts/00000000-0000-7000-8000-000000000000",
        "reader",
        None,
        None,
        None,
        None,
        (),
    ),
]


@pytest.mark.parametrize("request_", HOT, ids=lambda r: f"{r.method} {r.target}")
def test_the_hot_requests_are_answered_by_the_fast_path_alike(
    pair: Pair, request_: Request
) -> None:
    before = pair.answered()
    full, fast = pair.run(_both(pair, request_))
    assert pair.answered() == before + 1
    _assert_alike(full, fast)
    assert fast.status in (200, 201, 404)
    assert fast.metrics and fast.log  # counted and logged, as the full app does


def test_a_created_contact_is_stored_with_its_event(pair: Pair) -> None:
    request = HOT[0]
    before = pair.answered()
    seen = pair.run(_seen(pair.fast, request, pair, None))
    assert pair.answered() == before + 1 and seen.status == 201
    created = orjson.loads(pair.run(_created_id(pair, request)))
    assert created["first_name"] == "Ada"


async def _created_id(pair: Pair, request: Request) -> bytes:
    created = await _send(pair.fast, "POST", "/v1/contacts", request.headers(pair), ADA)
    contact_id = orjson.loads(created.content)["id"]
    read = await _send(
        pair.full, "GET", f"/v1/contacts/{contact_id}", request.headers(pair)[:1], None
    )
    assert read.status_code == 200
    async with pair.full.state.db.read() as conn:
        events = await list_events(conn, pair.owner_id, limit=500)
    assert any(e["type"] == "contact.created" and e["data"]["id"] == contact_id for e in events)
    return read.content


def test_past_the_budget_both_answer_the_same_429(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    """Each app has its own budget: the same sequence spends both alike."""
    url = make_database_url(backend, tmp_path_factory.mktemp("fast-429"), request)
    statuses = []
    for tight in _pair(url, rate_limit="4/day"):
        for sent in [HOT[1], HOT[2], HOT[0], HOT[2], HOT[1], HOT[2]]:
            full, fast = tight.run(_both(tight, sent))
            _assert_alike(full, fast)
            statuses.append(fast.status)
    assert statuses[:4] == [201, 200, 201, 200] and statuses[4:] == [429, 429]


def _rename_table(url: str, old: str, new: str) -> None:
    """A real fault under real requests: a table the requests use is gone (or back)."""
    statement = f"ALTER TABLE {old} RENAME TO {new}"
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as raw:
            raw.execute(statement)
        return

    async def rename() -> None:
        raw = await asyncpg.connect(url)
        try:
            await raw.execute(statement)
        finally:
            await raw.close()

    asyncio.run(rename())


def test_a_crash_in_the_handler_is_answered_as_the_full_app_answers_it(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    url = make_database_url(backend, tmp_path_factory.mktemp("fast-crash"), request)
    patch = Request("PATCH", "{own}", "owner", "application/json", {"notes": "n"}, None, None, ())
    for broken in _pair(url):
        _rename_table(url, "contacts", "contacts_gone")
        try:
            for sent in [HOT[0], HOT[2], patch]:
                before = broken.answered()
                full, fast = broken.run(_both(broken, sent))
                _assert_alike(full, fast)
                assert broken.answered() == before + 1  # answered by the fast path itself
                assert fast.status in (500, 503) and b"contacts_gone" not in fast.body
        finally:
            _rename_table(url, "contacts_gone", "contacts")


def test_a_failing_key_look_up_is_left_to_the_full_app(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    """Before the rate-limit charge nothing is answered by the fast path, a crash included."""
    url = make_database_url(backend, tmp_path_factory.mktemp("fast-keys"), request)
    for broken in _pair(url):
        _rename_table(url, "api_keys", "api_keys_gone")
        try:
            for sent in [HOT[0], HOT[2]]:
                before = broken.answered()
                full, fast = broken.run(_both(broken, sent))
                _assert_alike(full, fast)
                assert broken.answered() == before
                assert fast.status in (500, 503)
        finally:
            _rename_table(url, "api_keys_gone", "api_keys")
