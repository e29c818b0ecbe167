"""The delivery workers' own statements: their registry (``workers``: who is alive, by
heartbeat) and the cross-process wake-up on PostgreSQL (``pg_notify``). ``delivery.manager`` and
``delivery.wakeup`` run them."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, func, insert, select, update

from hookline.storage.models import workers
from hookline.storage.statements import Query

_NOW = bindparam("now", type_=workers.c.heartbeat_at.type)

# A row supplies every column: id, hostname, pid, started_at, heartbeat_at.
REGISTER = Query(insert(workers))
UNREGISTER = Query(delete(workers).where(workers.c.id == bindparam("worker_id")))
HEARTBEAT = Query(
    update(workers).where(workers.c.id == bindparam("worker_id")).values(heartbeat_at=_NOW)
)
LIVE_PEERS = Query(
    select(workers.c.id, workers.c.hostname, workers.c.pid, workers.c.started_at)
    .where(
        workers.c.id != bindparam("worker_id"),
        workers.c.heartbeat_at >= bindparam("since", type_=workers.c.heartbeat_at.type),
    )
    .order_by(workers.c.started_at)
)
"""The other workers that heartbeat since ``since``, oldest first."""
REAP_SILENT = Query(
    delete(workers).where(
        workers.c.heartbeat_at < bindparam("before", type_=workers.c.heartbeat_at.type)
    )
)
"""Forget the workers whose last heartbeat is before ``before``."""
HEARTBEATS = Query(select(workers.c.id, workers.c.heartbeat_at))

NOTIFY = Query(select(func.pg_notify(bindparam("channel"), bindparam("origin")).label("notified")))
"""PostgreSQL: ``NOTIFY`` ``channel`` with the sending process's ``origin`` as payload."""
