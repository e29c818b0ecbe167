"""The application factory: wires settings, storage, the HTTP layer and the delivery worker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.routing import APIRoute

from hookline import __version__, dashboard, tracing
from hookline.api import (
    accounts,
    call_schemas,
    calls,
    conformance,
    contacts,
    deliveries,
    docs,
    erasures,
    event_types,
    events,
    health,
    operations,
    stream,
    webhooks,
)
from hookline.api.errors import install_error_handlers
from hookline.api.front import FrontDoor
from hookline.api.openapi import document_idempotency, document_input_rules, document_security
from hookline.api.responses import JSONResponse
from hookline.crypto import SecretBox, resolve_secret_key
from hookline.delivery import filters
from hookline.delivery.wakeup import make_wakeup
from hookline.delivery.worker import Chore, Worker
from hookline.domain import retention
from hookline.domain.calls import sweep_overdue_calls
from hookline.domain.readying import ready_for_requests
from hookline.guards.idempotency import IdempotencyStore
from hookline.guards.ratelimit import RateLimiter
from hookline.settings import Settings
from hookline.stopping import seconds_left
from hookline.storage.db import READY_CONNECTIONS, Database
from hookline.storage.migrate import upgrade_to_head


def worker_chores(settings: Settings) -> list[Chore]:
    """The periodic work every delivery worker runs (``serve``'s and ``hookline worker``)."""
    return [
        Chore("ending overdue calls", settings.call_sweep_seconds, sweep_overdue_calls),
        Chore("account retention", retention.SWEEP_EVERY_SECONDS, retention.chore_run(settings)),
    ]


API_DESCRIPTION = """
hookline stores an account's contacts and calls and delivers signed webhook events about them.

Authenticate every `/v1` request with `Authorization: Bearer hl_live_...`. Every error has the body
`{"success": false, "error": {"code", "message", "details", "request_id"}}`.
"""


def _operation_id(route: APIRoute) -> str:
    return route.name


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    filters.configure(filters.Limits.from_settings(settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(settings)
        app.state.db = db
        app.state.secret_box = SecretBox(resolve_secret_key(settings))
        app.state.idempotency = IdempotencyStore(db, app.state.secret_box)
        await upgrade_to_head(db)
        # A worker in process shares the pool: its rounds, its recorder and its next-due look
        # hold as many connections as it readies, and a request would meet a cold one. So both
        # ready twice as many, the API first: the worker's readying takes the
        # connections it opened, idle, and parses its own statements on them.
        ready = READY_CONNECTIONS * (2 if settings.worker_in_process else 1)
        await ready_for_requests(db, connections=ready)
        wakeup = make_wakeup(settings, db)
        app.state.wakeup = wakeup
        worker: Worker | None = None
        if settings.worker_in_process:
            worker = Worker(
                settings,
                db,
                wakeup=wakeup,
                secret_box=app.state.secret_box,
                ready_connections=ready,
                chores=worker_chores(settings),
            )
            await worker.start()
        try:
            yield
        finally:
            if worker is not None:
                # After a signal: what the HTTP side left of the stop's grace (stopping.py).
                await worker.stop(seconds_left(settings.stop_grace_seconds))
            pending: set[asyncio.Task[None]] = app.state.background_tasks
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            await wakeup.close()
            await app.state.rate_limiter.aclose()
            hub = getattr(app.state, "stream_hub", None)
            if hub is not None:
                await hub.close()
            await db.dispose()
            tracing.flush()

    app = FrontDoor(
        max_body_bytes=settings.max_body_bytes,
        title="hookline",
        version=__version__,
        description=API_DESCRIPTION,
        openapi_url="/v1/openapi.json",
        docs_url=None,  # docs.install serves /docs and /redoc without a CDN
        redoc_url=None,
        default_response_class=JSONResponse,
        lifespan=lifespan,
        # Starlette's redirect builds an absolute URL from the Host header; api.errors answers
        # the same 307 with a relative Location instead.
        redirect_slashes=False,
        # operationId = the endpoint's name (create_contact, not create_contact_v1_contacts_post):
        # the generated clients' method names (clients/).
        generate_unique_id_function=_operation_id,
    )
    app.state.settings = settings
    app.state.background_tasks = set()
    app.state.rate_limiter = RateLimiter(settings)
    install_error_handlers(app)
    document_idempotency(app)
    document_input_rules(app)
    document_security(app)
    tracing.configure_from_environment()  # spans only: the front door opens them when on
    # stream before events: /v1/events/{event_id} would take /v1/events/stream.
    for module in (
        health,
        accounts,
        contacts,
        erasures,
        calls,
        call_schemas,
        webhooks,
        deliveries,
        operations,
        stream,
        events,
        event_types,
        conformance,
    ):
        app.include_router(module.router)
    event_types.add_webhooks_to_openapi(app)
    dashboard.install(app)
    docs.install(app)
    return app
