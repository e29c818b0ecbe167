"""What the probes and ``GET /metrics`` read about the delivery queue and its workers: the
queue's depth and age, and every registered worker's last heartbeat.

Read-only figures for operators, on the request side (``api.health``); the worker registers
and heartbeats through its engine (``delivery.manager``). The statements are in
``storage.queries.deliveries`` and ``storage.queries.workers``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hookline.storage.db import Database
from hookline.storage.queries import deliveries as queries
from hookline.storage.queries import workers as worker_queries


@dataclass(frozen=True)
class QueueStats:
    undispatched_events: int
    pending_deliveries: int
    due_deliveries: int
    oldest_due_age_seconds: float


async def worker_heartbeats(db: Database) -> list[tuple[str, datetime]]:
    """(worker id, last heartbeat) of every registered worker."""
    async with db.read() as conn:
        rows = await conn.execute(worker_queries.HEARTBEATS)
    return [(row.id, row.heartbeat_at) for row in rows]


async def queue_stats(db: Database, *, now: datetime) -> QueueStats:
    async with db.read() as conn:
        undispatched = await conn.scalar(queries.COUNT_UNDISPATCHED)
        pending = await conn.scalar(queries.COUNT_PENDING)
        due_row = (await conn.execute(queries.DUE_NOW, {"now": now})).one()
    oldest = due_row[1]
    if isinstance(oldest, str):  # SQLite aggregates lose the column type
        oldest = datetime.fromisoformat(oldest).replace(tzinfo=now.tzinfo)
    age = (now - oldest).total_seconds() if isinstance(oldest, datetime) else 0.0
    return QueueStats(
        undispatched_events=int(undispatched or 0),
        pending_deliveries=int(pending or 0),
        due_deliveries=int(due_row[0] or 0),
        oldest_due_age_seconds=max(0.0, age),
    )
