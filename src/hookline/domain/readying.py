"""The statements nearly every API request runs, readied as a server starts.

On PostgreSQL a fresh connection's first run of a statement waits for what a warm one has:
asyncpg's look-up of the statement's types and PostgreSQL's first parse on a backend whose
catalog caches are empty. The app's
lifespan readies these on pooled connections before the server accepts (``Database.ready``),
and the delivery worker readies its own (``delivery.manager.ready``); with the
worker in process, on twice as many connections (app.py), since beside a hanging and a failing
endpoint the worker holds the connections it readied and a request would meet a cold one. A
fresh process's very first requests still wait for Python's own first-use work. Nothing
to do on SQLite.
"""

from __future__ import annotations

from hookline.storage.db import READY_CONNECTIONS, Database
from hookline.storage.queries import contacts as contact_queries
from hookline.storage.queries import keys as key_queries
from hookline.storage.queries.workers import NOTIFY
from hookline.storage.statements import Statement

REQUEST_STATEMENTS: tuple[Statement, ...] = (
    key_queries.LIVE_BY_HASH.many,  # every authenticated request, batched (``SharedLookup``)
    contact_queries.INSERT_WITH_EVENT.combined,  # POST /v1/contacts
    contact_queries.BY_ID,  # GET /v1/contacts/{id}
    NOTIFY,  # the wake-up after a committed event
)


async def ready_for_requests(db: Database, connections: int = READY_CONNECTIONS) -> None:
    await db.ready(REQUEST_STATEMENTS, of="the API's requests", connections=connections)
