"""OpenTelemetry: one trace from the API request that wrote an event to each delivery attempt;
nothing at all when tracing is not configured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from sqlalchemy import select

from hookline import tracing
from hookline.app import create_app
from hookline.storage.models import events
from tests.conftest import Account, make_settings, new_account
from tests.support.receiver import Receiver
from tests.support.waiting import eventually


def _named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def _attr(span: ReadableSpan, name: str) -> Any:
    assert span.attributes is not None
    return span.attributes[name]


async def test_the_request_and_every_attempt_of_its_event_are_one_trace(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    try:
        settings = make_settings(
            f"sqlite:///{tmp_path / 'traced.db'}", worker_in_process=True, retry_schedule="0.1"
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app), Receiver() as receiver:
            receiver.script([500])  # the first attempt fails, the retry succeeds
            owner = await new_account(app.state.db)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                hook = await http.post(
                    "/v1/webhooks",
                    json={"url": receiver.url, "events": ["contact.created"]},
                    headers=owner.headers,
                )
                assert hook.status_code == 201
                created = await http.post(
                    "/v1/contacts",
                    json={"first_name": "Ada", "phone_number": "+14155552671"},
                    headers=owner.headers,
                )
                assert created.status_code == 201
            [*_, delivered] = await receiver.wait_for(2)
            await eventually(
                lambda: _async(len(_named(exporter.get_finished_spans(), "webhook.attempt"))),
                lambda n: n == 2,
            )
    finally:
        tracing.use(None)

    spans = exporter.get_finished_spans()
    [request] = _named(spans, "POST /v1/contacts")
    attempts = sorted(_named(spans, "webhook.attempt"), key=lambda s: _attr(s, "hookline.attempt"))
    event_id = delivered.headers["webhook-id"]
    for attempt in attempts:
        assert attempt.context.trace_id == request.context.trace_id
        assert attempt.parent is not None and attempt.parent.span_id == request.context.span_id
        assert _attr(attempt, "hookline.event.id") == event_id
    assert [_attr(a, "hookline.attempt") for a in attempts] == [1, 2]
    assert attempts[0].status.status_code is StatusCode.ERROR
    assert _attr(attempts[0], "http.response.status_code") == 500
    assert _attr(attempts[1], "http.response.status_code") == 204
    # The webhook's creation wrote no event: its trace has no attempt.
    [creation] = _named(spans, "POST /v1/webhooks")
    assert all(a.context.trace_id != creation.context.trace_id for a in attempts)


async def _async(value: int) -> int:
    return value


async def test_without_an_endpoint_nothing_is_set_up_or_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    app = create_app(make_settings(f"sqlite:///{tmp_path / 'plain.db'}"))
    assert not tracing.enabled()
    async with app.router.lifespan_context(app):
        owner = await new_account(app.state.db)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            created = await _create_ada(http, owner)
            assert created.status_code == 201
        async with app.state.db.read() as conn:
            stored = (await conn.execute(select(events.c.trace_context))).scalars().all()
    assert stored == [None]


def test_an_otlp_endpoint_turns_tracing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    try:
        assert tracing.configure_from_environment()
        assert tracing.enabled()
    finally:
        tracing.stop()
    assert not tracing.enabled()


async def _create_ada(http: httpx.AsyncClient, owner: Account) -> httpx.Response:
    return await http.post(
        "/v1/contacts",
        json={"first_name": "Ada", "phone_number": "+14155552671"},
        headers=owner.headers,
    )


async def _answers(tmp_path: Path, name: str) -> list[tuple[int, list[str], Any]]:
    """What a round of requests, good and bad, gets back (each answer's status, header names
    and JSON body, without what differs from run to run: ids, times, a page's CSRF token)."""
    app = create_app(make_settings(f"sqlite:///{tmp_path / name}"))
    answers: list[tuple[int, list[str], Any]] = []
    async with app.router.lifespan_context(app):
        owner = await new_account(app.state.db)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            contact = (await _create_ada(http, owner)).json()["id"]
            for method, path, headers in [
                ("GET", f"/v1/contacts/{contact}", owner.headers),
                ("GET", "/v1/contacts?limit=1", owner.headers),
                ("PATCH", f"/v1/contacts/{contact}", {**owner.headers, "X-Request-Id": "r1"}),
                ("GET", "/v1/contacts", {"Authorization": "Bearer nope"}),
                ("GET", "/v1/contacts?limti=1", owner.headers),
                ("GET", "/v1/nothing-here", owner.headers),
                ("GET", "/healthz", {}),
                ("GET", "/dashboard/login", {}),
            ]:
                response = await http.request(method, path, headers=headers, json={})
                body: Any = None  # a page carries a fresh CSRF token
                if response.headers.get("content-type") == "application/json":
                    body = response.json()
                    if isinstance(body, dict) and "error" in body:
                        body["error"].pop("request_id")
                    if isinstance(body, dict):
                        for varies in ("id", "created_at", "updated_at"):
                            body.pop(varies, None)
                    if isinstance(body, list):
                        body = len(body)
                answers.append((response.status_code, sorted(response.headers), body))
    return answers


async def test_tracing_on_or_off_changes_nothing_but_the_spans(tmp_path: Path) -> None:
    plain = await _answers(tmp_path, "plain.db")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    try:
        traced = await _answers(tmp_path, "traced.db")
    finally:
        tracing.stop()
    assert [status for status, _, _ in plain] == [200, 200, 200, 401, 422, 404, 200, 200]
    assert traced == plain
    names = [span.name for span in exporter.get_finished_spans()]
    assert "GET /v1/contacts/{contact_id}" in names and "GET /dashboard/login" in names
