"""OpenTelemetry: one trace from the API request that wrote an event to each delivery attempt;
nothing at all when tracing is not configured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from sqlalchemy import select

from hookline import tracing
from hookline.app import create_app
from hookline.storage.models import events
from tests.conftest import make_settings, new_account
from tests.support.receiver import Receiver
from tests.support.waiting import eventually


def _named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def _attr(span: ReadableSpan, name: str) -> Any:
    assert span.attributes is not None
    return span.attributes[name]


def _middleware(app: FastAPI) -> set[Any]:
    return {m.cls for m in app.user_middleware}


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
    assert tracing.TracingMiddleware not in _middleware(app)
    async with app.router.lifespan_context(app):
        owner = await new_account(app.state.db)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            created = await http.post(
                "/v1/contacts",
                json={"first_name": "Ada", "phone_number": "+14155552671"},
                headers=owner.headers,
            )
            assert created.status_code == 201
        async with app.state.db.read() as conn:
            stored = (await conn.execute(select(events.c.trace_context))).scalars().all()
    assert stored == [None]


def test_an_otlp_endpoint_turns_tracing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    try:
        assert tracing.configure_from_environment()
        assert tracing.enabled()
        app = create_app(make_settings("sqlite:///unused.db"))
        assert tracing.TracingMiddleware in _middleware(app)
    finally:
        tracing.stop()
    assert not tracing.enabled()
