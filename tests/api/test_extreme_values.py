"""Every date and number at its extremes, on every operation of the API, on SQLite and PostgreSQL.

The slots come from the app's own OpenAPI document: every query parameter and body field (nested
ones, and the values of free JSON objects such as ``metadata``) whose schema is a date-time, an
integer or a number. Each slot gets, through hypothesis, the edges of its kind and of the others
(years 1 to 10000 around the window's ends with every offset and beyond the offsets' range, the
bounds of 32- and 64-bit integers and past them, NaN, Infinity, ``1e400``, ...) in a request that
is otherwise valid. The answer is never a 5xx: a 2xx that stored and returns what was sent, or a
documented 4xx in the contract's error shape, a 422 naming the slot's field.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Coroutine, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookline.app import create_app
from hookline.domain.validation import TIMESTAMP_PATTERN
from hookline.timeutil import iso, parse_iso, to_millis, utcnow
from tests.conftest import Account, make_database_url, make_settings, new_account

T = TypeVar("T")
EXAMPLES_PER_SLOT = 50
SLOT = "\u0000slot\u0000"  # where the value goes in a body, replaced by its JSON text
VALID_TEXT = {  # required strings whose shape matters, for the otherwise valid requests
    "phone_number": "+14155552671",
    "customer_phone_number": "+14155552671",
    "url": "https://example.com/hooks",
}


@dataclass(frozen=True)
class Slot:
    method: str
    path: str
    where: str  # "query" or "body"
    pointer: tuple[str, ...]  # the parameter, or the body's keys down to the value
    kind: str  # "date-time", "integer" or "number"
    operation: dict[str, Any] = field(repr=False)

    @property
    def field(self) -> str:
        return self.pointer[0]

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.where}:{'.'.join(self.pointer)} ({self.kind})"


# --- the slots, from the document ---------------------------------------------------------------


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    ref = schema.get("$ref")
    if ref is None:
        return None, schema
    target: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return ref, target


def _kind(schema: dict[str, Any]) -> str | None:
    if schema.get("format") == "date-time":
        return "date-time"
    kind = schema.get("type")
    return kind if kind in ("integer", "number") else None


def _leaves(
    doc: dict[str, Any],
    schema: dict[str, Any],
    pointer: tuple[str, ...] = (),
    seen: frozenset[str] = frozenset(),
) -> Iterator[tuple[tuple[str, ...], str]]:
    """(pointer, kind) of every date-time, integer and number a value of ``schema`` holds."""
    ref, schema = _resolve(doc, schema)
    if ref in seen:
        return
    seen = seen | {ref} if ref else seen
    for alternative in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        yield from _leaves(doc, alternative, pointer, seen)
    kind = _kind(schema)
    if kind is not None:
        yield pointer, kind
    for name, sub in schema.get("properties", {}).items():
        yield from _leaves(doc, sub, (*pointer, name), seen)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _leaves(doc, schema["additionalProperties"], (*pointer, "n"), seen)


def slots_of(doc: dict[str, Any]) -> list[Slot]:
    found: dict[tuple[str, str, str, tuple[str, ...], str], Slot] = {}
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            leaves = [
                ("query", pointer, kind)
                for parameter in operation.get("parameters", [])
                if parameter["in"] == "query"
                for pointer, kind in _leaves(
                    doc, parameter["schema"], (parameter["name"],), frozenset()
                )
            ]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                leaves += [
                    ("body", *leaf) for leaf in _leaves(doc, body["schema"], (), frozenset())
                ]
            for where, pointer, kind in leaves:
                key = (method.upper(), path, where, pointer, kind)
                found[key] = Slot(*key, operation)
    return list(found.values())


def valid_value(doc: dict[str, Any], name: str, schema: dict[str, Any]) -> Any:
    """A value ``schema`` accepts, for the otherwise valid request around a slot."""
    _, schema = _resolve(doc, schema)
    choices = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    if choices:
        return valid_value(doc, name, choices[0])
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("format") == "date-time":
        return iso(utcnow() - timedelta(minutes=1))
    kind = schema.get("type")
    if kind == "object":
        return valid_body(doc, schema)
    if kind == "array":
        return [valid_value(doc, name, schema["items"])]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    assert kind == "string", (name, schema)
    return VALID_TEXT.get(name, "x")


def valid_body(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    _, schema = _resolve(doc, schema)
    properties = schema.get("properties", {})
    return {name: valid_value(doc, name, properties[name]) for name in schema.get("required", [])}


# --- the values ---------------------------------------------------------------------------------

_DAYS = [
    "0001-01-01", "1969-12-31", "1970-01-01", "1970-01-02", "2026-12-07",
    "9998-12-30", "9998-12-31", "9999-01-01", "9999-12-31", "0000-01-01", "10000-01-01",
]  # fmt: skip
_TIMES = ["00:00:00", "23:59:59.999999", "12:00:00.5", "23:59:60", "24:00:00"]
_OFFSETS = [
    "Z", "+00:00", "-00:00", "+14:00", "-14:00", "+23:59", "-23:59", "+24:00", "-99:99", "",
]  # fmt: skip
_INTEGERS = [
    0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**53 + 1,
    2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**100, -(10**100),
]  # fmt: skip
# JSON text a client may send for a number, valid JSON or not (NaN and 1e400 parse).
_NUMBER_TEXTS = [
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "-0.0", "1.0", "0.5",
    "1.7976931348623157e308", "5e-324", "1E2", "-0",
]  # fmt: skip

_spelled_days = st.builds(
    lambda day, time, offset: f"{day}T{time}{offset}",
    st.sampled_from(_DAYS),
    st.sampled_from(_TIMES),
    st.sampled_from(_OFFSETS),
)
_any_moment = st.datetimes(datetime.min, datetime.max, timezones=st.timezones()).map(
    datetime.isoformat
)
# Around now (in and out of a retention window), and up to the window's end (long calls).
_recent = st.integers(-45 * 86_400_000, 86_400_000).map(
    lambda ms: iso(utcnow() + timedelta(milliseconds=ms))
)
_ahead = st.integers(0, 2_900_000).map(lambda days: iso(utcnow() + timedelta(days=days)))
_integers = st.sampled_from(_INTEGERS) | st.integers()
_numbers = st.sampled_from(_NUMBER_TEXTS) | st.floats(allow_nan=False, allow_infinity=False)
_others = st.sampled_from(["true", "null", '"1"', '""', "[]", "{}"])


def _text(value: Any) -> str:
    """The JSON text of a value (strings of number texts are the number's JSON text itself)."""
    if isinstance(value, str) and value in _NUMBER_TEXTS:
        return value
    return json.dumps(value)


_datetime_values = st.one_of(_spelled_days, _any_moment, _recent, _ahead).map(json.dumps)
_number_values = st.one_of(_integers, _numbers).map(_text)
VALUES = {
    "date-time": st.one_of(_datetime_values, st.sampled_from(_INTEGERS).map(_text), _others),
    "integer": st.one_of(_number_values, _others),
    "number": st.one_of(_number_values, _datetime_values, _others),
}


# --- the app ------------------------------------------------------------------------------------


@dataclass
class Served:
    """The app on its own database and loop, its document, and the account of the slot under
    test (one per slot: an account holds at most 100 webhooks)."""

    runner: asyncio.Runner
    app: FastAPI
    doc: dict[str, Any]
    account: Account | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coro)


@pytest.fixture(scope="module")
def served(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Served]:
    url = make_database_url(backend, tmp_path_factory.mktemp("extremes"), request)
    app = create_app(make_settings(url))
    with asyncio.Runner() as runner:
        stack = AsyncExitStack()
        runner.run(stack.enter_async_context(app.router.lifespan_context(app)))
        try:
            yield Served(runner, app, app.openapi())
        finally:
            runner.run(stack.aclose())


async def _request(
    served: Served, method: str, path: str, *, query: dict[str, str] | None = None, body: str = ""
) -> httpx.Response:
    transport = httpx.ASGITransport(app=served.app)
    assert served.account is not None
    headers = {**served.account.headers, "Content-Type": "application/json"}
    async with httpx.AsyncClient(transport=transport, base_url="http://hookline.test") as client:
        return await client.request(
            method, path, params=query, content=body or None, headers=headers
        )


async def _fresh(served: Served, parameter: str) -> str:
    """A new resource of the account for a path parameter (a call still in progress)."""
    created = {
        "contact_id": ("/v1/contacts", {"first_name": "Ada", "phone_number": "+14155552671"}),
        "call_id": ("/v1/calls", {"call_type": "inbound", "customer_phone_number": "+14155552671"}),
        "webhook_id": ("/v1/webhooks", {"url": VALID_TEXT["url"], "events": ["contact.created"]}),
    }
    assert parameter in created, f"no way to make a {parameter} for the test: add one"
    path, body = created[parameter]
    response = await _request(served, "POST", path, body=json.dumps(body))
    assert response.status_code == 201, response.text
    identifier: str = response.json()["id"]
    return identifier


async def _send(served: Served, slot: Slot, value: str) -> tuple[httpx.Response, Any]:
    """The slot's operation with ``value`` (JSON text) in the slot, everything else valid.
    Returns the response and what was sent in the slot."""
    path = slot.path
    for parameter in slot.operation.get("parameters", []):
        if parameter["in"] == "path":
            name = parameter["name"]
            path = path.replace(f"{{{name}}}", await _fresh(served, name))
    body = ""
    content = slot.operation.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        valid = valid_body(served.doc, content["application/json"]["schema"])
        if slot.where == "body":
            _place(valid, slot.pointer, SLOT)
        body = json.dumps(valid).replace(json.dumps(SLOT), value)
    query = None
    if slot.where == "query":
        sent = json.loads(value) if value.startswith('"') else value
        query = {slot.field: sent}
    return await _request(served, slot.method, path, query=query, body=body), value


def _place(body: dict[str, Any], pointer: tuple[str, ...], value: Any) -> None:
    for key in pointer[:-1]:
        body = body.setdefault(key, {})
    body[pointer[-1]] = value


# --- what every answer must be ------------------------------------------------------------------


def _check(slot: Slot, value: str, response: httpx.Response) -> None:
    status = response.status_code
    assert status < 500, (str(slot), value, response.text)
    assert str(status) in slot.operation["responses"], (str(slot), value, status, response.text)
    answer = response.json()
    if status >= 400:
        error = answer["error"]
        assert answer["success"] is False and isinstance(error["message"], str), answer
        assert isinstance(error["request_id"], str) and isinstance(error["code"], str), answer
        if status == 422:
            named = [field["field"] for field in error["details"]["fields"]]
            assert slot.field in named, (str(slot), value, named)
        return
    if slot.where == "body":
        _assert_kept(slot, value, answer)
    _assert_call_length(answer)


def _assert_kept(slot: Slot, value: str, answer: Any) -> None:
    """What the answer shows of the slot is what was sent: the same instant (to the
    millisecond), the same integer, the same double (``1e-400`` is 0.0, and PostgreSQL
    writes ``5.980139656400833e+16`` as ``59801396564008330``), or the number a typed field
    read from its text."""
    shown = answer
    for key in slot.pointer:
        if not isinstance(shown, dict) or key not in shown:
            return
        shown = shown[key]
    sent = json.loads(value, parse_float=Decimal)
    if sent is None:  # the field's default
        return
    if slot.kind == "date-time":
        assert parse_iso(shown) == to_millis(parse_iso(sent)), (str(slot), value, shown)
    elif isinstance(shown, float) or isinstance(sent, Decimal):
        assert math.isfinite(shown) and float(shown) == float(sent), (str(slot), value, shown)
    elif isinstance(shown, int) and isinstance(sent, str):
        assert shown == int(sent), (str(slot), value, shown)
    else:
        assert shown == sent, (str(slot), value, shown)


def _assert_call_length(answer: Any) -> None:
    if not isinstance(answer, dict) or answer.get("duration_seconds") is None:
        return
    length = parse_iso(answer["call_ended_at"]) - parse_iso(answer["call_started_at"])
    assert answer["duration_seconds"] == math.floor(length.total_seconds()), answer
    assert 0 <= answer["duration_seconds"] < 2**31, answer


# --- the tests ----------------------------------------------------------------------------------


def test_every_date_and_number_at_its_extremes_is_answered_never_a_5xx(served: Served) -> None:
    slots = slots_of(served.doc)
    named = {(slot.path, slot.field) for slot in slots}
    # Not vacuous: the document's dates and numbers were found, in bodies and queries alike.
    assert {
        ("/v1/calls", "call_started_at"),
        ("/v1/calls/{call_id}/complete", "call_ended_at"),
        ("/v1/calls", "metadata"),
        ("/v1/webhooks/{webhook_id}/stats", "until"),
        ("/v1/webhooks/{webhook_id}/recover", "since"),
        ("/v1/webhooks", "rate_limit"),
        ("/v1/contacts", "limit"),
    } <= named, named
    failed = []
    for slot in slots:
        try:
            _hold(served, slot)
        except Exception as failure:  # every slot's counterexamples, then fail
            failed += [f"{slot}: {line}" for line in _first_lines(failure)]
    assert not failed, "\n".join(failed)


def _first_lines(failure: Exception) -> list[str]:
    """What each distinct counterexample (hypothesis groups them) failed with."""
    if isinstance(failure, ExceptionGroup):
        return [line for sub in failure.exceptions for line in _first_lines(sub)]
    return [f"{type(failure).__name__}: {str(failure).splitlines()[0]}"]


def _hold(served: Served, slot: Slot) -> None:
    served.account = served.run(new_account(served.app.state.db))

    # Derandomized, without the example database: the same draws every run, so a run under
    # load fails for the property only.
    @settings(
        max_examples=EXAMPLES_PER_SLOT,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(VALUES[slot.kind])
    def answered(value: str) -> None:
        response, sent = served.run(_send(served, slot, value))
        _check(slot, sent, response)

    answered()


def test_every_date_time_in_the_document_is_the_one_bounded_type(served: Served) -> None:
    """One rule bounds every date and time the API takes: the window of ``TIMESTAMP_PATTERN``."""
    dates = [slot for slot in slots_of(served.doc) if slot.kind == "date-time"]
    assert dates
    for slot in dates:
        schema = _schema_at(served.doc, slot)
        assert schema.get("pattern") == TIMESTAMP_PATTERN, str(slot)


def _schema_at(doc: dict[str, Any], slot: Slot) -> dict[str, Any]:
    if slot.where == "query":
        (parameter,) = [p for p in slot.operation["parameters"] if p["name"] == slot.field]
        schema = parameter["schema"]
    else:
        schema = slot.operation["requestBody"]["content"]["application/json"]["schema"]
        for key in slot.pointer:
            _, schema = _resolve(doc, schema)
            schema = schema["properties"][key]
    _, schema = _resolve(doc, schema)
    (date_time,) = [s for s in [schema, *schema.get("anyOf", [])] if _kind(s) == "date-time"]
    found: dict[str, Any] = date_time
    return found
