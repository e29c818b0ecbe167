"""The statements nearly every API request runs, readied as a server starts.

On PostgreSQL a fresh process's first requests waited for what a warm one has: pooled
connections opened, asyncpg's look-up of each statement's types, and each statement's first
parse on a backend whose catalog caches are empty. The key look-up alone took 36-56 ms so, once
per connection (docs/benchmarks.md, 111 (d)): a blip after every deploy or restart. The app's
lifespan readies them before the server accepts (``Database.ready``); the delivery worker
readies its own (``delivery.manager.ready_connections``). Nothing to do on SQLite.
"""

from __future__ import annotations

from hookline.storage.db import READY_CONNECTIONS, Database
from hookline.storage.queries import contacts as contact_queries
from hookline.storage.queries import keys as key_queries
from hookline.storage.queries.workers import NOTIFY
from hookline.storage.statements import Statement

REQUEST_STATEMENTS: tuple[Statement, ...] = (
    key_queries.LIVE_BY_HASH.many,  # every authenticated request, batched (``JointLookup``)
    contact_queries.INSERT_WITH_EVENT.combined,  # POST /v1/contacts
    contact_queries.BY_ID,  # GET /v1/contacts/{id}
    NOTIFY,  # the wake-up after a committed event
)


async def ready_for_requests(db: Database, connections: int = READY_CONNECTIONS) -> None:
    await db.ready(REQUEST_STATEMENTS, of="the API's requests", connections=connections)
