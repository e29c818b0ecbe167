"""OpenTelemetry tracing: one trace per event, from the API request that wrote it to every
delivery attempt.

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (``configure_from_environment``): then spans
are exported with OTLP over HTTP, batched, and the rest of the standard ``OTEL_*`` variables
(headers, service name, resource attributes) apply as the SDK reads them. Off, nothing is set
up: no SDK is imported, no span or context object is created and
events store no trace context, so tracing costs one ``is None`` test where it would happen.

The chain: the front door (``api.front``) opens a server span per request (``server_span``,
continuing the caller's ``traceparent`` if it sent one); an event written inside it stores that
span's W3C ``traceparent`` (``events.trace_context``); the worker opens each attempt's span as
a child of that context, so every attempt of every webhook for the event is in the event's
trace. An alert written after an attempt (``webhook.disabled``, ``delivery.exhausted``) stores
the attempt span's context, so its own deliveries continue the trace that caused it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from hookline.logs import redact_path

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer
    from starlette.types import Scope

TRACER_NAME = "hookline"
DEFAULT_SERVICE_NAME = "hookline"

_tracer: Tracer | None = None
_provider: TracerProvider | None = None


def enabled() -> bool:
    return _tracer is not None


def use(provider: TracerProvider | None) -> None:
    """Trace with ``provider`` (None: stop tracing). ``configure_from_environment`` calls it;
    tests call it with a provider that exports to memory."""
    global _tracer, _provider
    _provider = provider
    _tracer = provider.get_tracer(TRACER_NAME) if provider is not None else None


def configure_from_environment() -> bool:
    """Set up OTLP export if ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (once per process)."""
    if _tracer is not None or not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return _tracer is not None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: DEFAULT_SERVICE_NAME}
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    use(provider)
    return True


def stop() -> None:
    """Export what is buffered and stop tracing (tests; a process just exits)."""
    provider = _provider
    use(None)
    if provider is not None:
        provider.shutdown()


def flush() -> None:
    """Export what is buffered (an app shutting down; the SDK also flushes at exit)."""
    if _provider is not None:
        _provider.force_flush()


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span, to store with an event; None when off."""
    if _tracer is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


@contextlib.contextmanager
def attempt_span(
    trace_context: str | None, attributes: Callable[[], dict[str, Any]]
) -> Iterator[Span | None]:
    """A delivery attempt's span, a child of the stored ``trace_context``; None when off."""
    if _tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = (
        TraceContextTextMapPropagator().extract({"traceparent": trace_context})
        if trace_context
        else None
    )
    with _tracer.start_as_current_span(
        "webhook.attempt", context=parent, kind=SpanKind.CLIENT, attributes=attributes()
    ) as span:
        yield span


def end_attempt(span: Span | None, status_code: int | None, error: str | None) -> None:
    if span is None:
        return
    from opentelemetry.trace import StatusCode

    if status_code is not None:
        span.set_attribute("http.response.status_code", status_code)
    if error is not None or status_code is None or not 200 <= status_code < 300:
        span.set_status(StatusCode.ERROR, error or f"HTTP {status_code}")


@contextlib.contextmanager
def server_span(scope: Scope) -> Iterator[Span]:
    """The request's server span (continuing the caller's ``traceparent`` if it sent one),
    current while the front door answers it; only called when tracing is on."""
    assert _tracer is not None
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    parent = TraceContextTextMapPropagator().extract(headers)
    method = scope["method"]
    with _tracer.start_as_current_span(
        method,
        context=parent,
        kind=SpanKind.SERVER,
        attributes={"http.request.method": method, "url.path": redact_path(scope["path"])},
    ) as span:
        yield span


def end_server_span(span: Span, method: str, status: int, route: str) -> None:
    """The answer's status, and the route's template in the span's name (``unmatched``: none)."""
    from opentelemetry.trace import StatusCode

    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        span.set_status(StatusCode.ERROR)
    if route != "unmatched":
        span.update_name(f"{method} {route}")
        span.set_attribute("http.route", route)
