"""The erasure job: removes an erased contact's data from everything that still holds it.

``POST /v1/contacts/{id}/erase`` (``domain.erasures``) deletes the contact and writes its
``erasures`` row; this job, run by every delivery worker (``run_erasures``), then works through
the row's steps in small batches, each batch one short transaction that also stores its
progress in the row, so a crash resumes at the last committed batch and never leaves one half
done. A worker holds an erasure by a lease that each batch renews; a dead worker's is taken over
once it has passed. Steps:

* ``calls``: the contact's calls lose the customer's number, metadata and analysis;
* ``events``: every event about the contact or one of its calls is deleted with its deliveries
  and their attempts (request and response bodies), noting which webhook received which;
* ``idempotency``: stored responses (``Idempotency-Key``) that name the contact or its calls;
* ``notify``: a ``contact.erased`` event to each active webhook that received any of them (and
  to those subscribed to it), listing the purged event ids it had received; then ``done``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from hookline.crypto import SecretBox
from hookline.storage.db import Connection, Database, fetch_all, fetch_one
from hookline.storage.outbox import record_event
from hookline.storage.queries import erasures as queries
from hookline.timeutil import utcnow

log = logging.getLogger(__name__)

BATCH = 200
LEASE_SECONDS = 30.0
POLL_SECONDS = 1.0
# Between batches, let the API's writes through (SQLite has one writer).
PAUSE_SECONDS = 0.01
ERASED_TYPE = "contact.erased"
STEPS = ("calls", "events", "idempotency", "notify", "done")
COUNT_NAMES = ("calls", "events", "deliveries", "attempts", "idempotent_responses")


@dataclass
class _Erasure:
    """An erasure's row as the job moves it on."""

    id: str
    account_id: str
    contact_id: str
    phase: str
    position: str | None
    call_ids: list[str]
    counts: dict[str, int]
    received: dict[str, list[str]]
    notices: list[dict[str, Any]] = field(default_factory=list)
    status: str = "running"
    finished_at: datetime | None = None

    @classmethod
    def of(cls, row: Any) -> _Erasure:
        return cls(
            id=row.id,
            account_id=row.account_id,
            contact_id=row.contact_id,
            phase=row.phase,
            position=row.position,
            call_ids=list(row.call_ids),
            counts={name: int(row.counts.get(name, 0)) for name in COUNT_NAMES},
            received={hook: list(events) for hook, events in row.received.items()},
            notices=list(row.notices),
        )

    def advance(self) -> None:
        self.phase, self.position = STEPS[STEPS.index(self.phase) + 1], None

    def progress(self, worker_id: str, until: datetime) -> dict[str, Any]:
        """The row's new values; a finished erasure is held by nobody."""
        held = self.status != "done"
        return {
            "b_id": self.id,
            "phase": self.phase,
            "position": self.position,
            "counts": self.counts,
            "received": self.received,
            "notices": self.notices,
            "status": self.status,
            "finished_at": self.finished_at,
            "leased_by": worker_id if held else None,
            "leased_until": until if held else None,
        }


class ErasureJob:
    """Runs erasures for one worker (``worker_id``): ``run_next`` finds one and carries it out."""

    def __init__(
        self,
        db: Database,
        box: SecretBox,
        worker_id: str,
        *,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        self.db, self.box, self.worker_id = db, box, worker_id
        self.lease = timedelta(seconds=lease_seconds)

    async def run_next(self) -> bool:
        """Carry out the oldest unfinished erasure no live worker holds; False if none."""
        async with self.db.read() as conn:
            erasure_id = await conn.scalar(queries.UNFINISHED, {"now": utcnow()})
        if erasure_id is None:
            return False
        more = await self.step(erasure_id)
        while more:
            await asyncio.sleep(PAUSE_SECONDS)  # a turn for the API's writes
            more = await self.step(erasure_id)
        await self._checkpoint()
        return True

    async def step(self, erasure_id: str) -> bool:
        """One batch of erasure ``erasure_id``, in one transaction with its progress; whether
        there is more to do (False also when another worker holds it)."""
        now = utcnow()
        until = now + self.lease
        lease = {"b_id": erasure_id, "worker_id": self.worker_id, "now": now, "until": until}
        async with self.db.begin() as conn:
            row = await fetch_one(conn, queries.TAKE, lease)
            if row is None:
                return False
            erasure = _Erasure.of(row)
            await _STEP[erasure.phase](self, conn, erasure)
            await conn.execute(queries.PROGRESS, erasure.progress(self.worker_id, until))
        return erasure.status != "done"

    async def _calls(self, conn: Connection, erasure: _Erasure) -> None:
        start = int(erasure.position or 0)
        batch = erasure.call_ids[start : start + BATCH]
        if batch:
            await conn.execute(
                queries.SCRUB_CALLS,
                {"account_id": erasure.account_id, "ids": batch, "now": utcnow()},
            )
            erasure.counts["calls"] += len(batch)
            erasure.position = str(start + len(batch))
        if start + len(batch) >= len(erasure.call_ids):
            erasure.advance()

    async def _events(self, conn: Connection, erasure: _Erasure) -> None:
        rows = await fetch_all(
            conn,
            queries.EVENTS_AFTER,
            {"account_id": erasure.account_id, "after": erasure.position or "", "limit": BATCH},
        )
        calls = set(erasure.call_ids)
        doomed = [row.id for row in rows if _is_about(row, erasure.contact_id, calls)]
        if doomed:
            await self._purge_events(conn, erasure, doomed)
        if len(rows) < BATCH:
            erasure.advance()
        else:
            erasure.position = rows[-1].id

    async def _purge_events(self, conn: Connection, erasure: _Erasure, doomed: list[str]) -> None:
        for webhook_id, event_id in await fetch_all(conn, queries.RECEIVED, {"ids": doomed}):
            erasure.received.setdefault(webhook_id, []).append(event_id)
        erasure.counts["deliveries"] += await conn.scalar(queries.DELIVERY_COUNT, {"ids": doomed})
        erasure.counts["attempts"] += await conn.scalar(queries.ATTEMPT_COUNT, {"ids": doomed})
        await conn.execute(queries.DELETE_EVENTS, {"account_id": erasure.account_id, "ids": doomed})
        erasure.counts["events"] += len(doomed)

    async def _idempotency(self, conn: Connection, erasure: _Erasure) -> None:
        rows = await fetch_all(
            conn,
            queries.IDEMPOTENT_AFTER,
            {"account_id": erasure.account_id, "after": erasure.position or "", "limit": BATCH},
        )
        names = (erasure.contact_id, *erasure.call_ids)
        doomed = [row.key for row in rows if self._names_any(row.response_body, names)]
        if doomed:
            await conn.execute(
                queries.DELETE_IDEMPOTENT, {"account_id": erasure.account_id, "keys": doomed}
            )
            erasure.counts["idempotent_responses"] += len(doomed)
        if len(rows) < BATCH:
            erasure.advance()
        else:
            erasure.position = rows[-1].key

    def _names_any(self, stored: str | None, names: tuple[str, ...]) -> bool:
        """Whether a stored response names any of ``names``; one that cannot be read (sealed
        with another key) is removed too: it can never be replayed."""
        if stored is None:
            return False
        try:
            body = self.box.decrypt(stored)
        except ValueError:
            return True
        return any(name in body for name in names)

    async def _notify(self, conn: Connection, erasure: _Erasure) -> None:
        active = await fetch_all(conn, queries.NOTICE_TARGETS, {"account_id": erasure.account_id})
        told = {
            hook.id
            for hook in active
            if hook.id in erasure.received or ERASED_TYPE in (hook.events or [])
        }
        for webhook_id in sorted(told):
            data = {
                "contact_id": erasure.contact_id,
                "event_ids": sorted(erasure.received.get(webhook_id, [])),
            }
            event_id = await record_event(
                conn, erasure.account_id, ERASED_TYPE, data, target_webhook_id=webhook_id
            )
            erasure.notices.append({"webhook_id": webhook_id, "event_id": event_id})
        # Webhooks that received the data but are inactive (or deleted) are not sent to.
        for webhook_id in sorted(set(erasure.received) - told):
            erasure.notices.append({"webhook_id": webhook_id, "event_id": None})
        erasure.advance()
        erasure.status, erasure.finished_at = "done", utcnow()

    async def _checkpoint(self) -> None:
        """SQLite: move the WAL into the file and empty it, so that the pages the erasure
        overwrote (``secure_delete``) leave no older copy in the WAL. Best effort: busy is
        left to SQLite's own checkpoints."""
        await self.db.empty_log()


def _is_about(row: Any, contact_id: str, calls: set[str]) -> bool:
    """Whether an event's body holds the contact's data: an event about the contact, or about
    one of its calls (never a contact.erased notice, which holds none)."""
    if row.type == ERASED_TYPE:
        return False
    if row.type.startswith("contact."):
        return bool(row.object_id == contact_id)
    return row.object_id in calls or row.cid == contact_id


_STEP = {
    "calls": ErasureJob._calls,
    "events": ErasureJob._events,
    "idempotency": ErasureJob._idempotency,
    "notify": ErasureJob._notify,
}


_JOB_STATEMENTS = (
    queries.UNFINISHED,
    queries.TAKE,
    queries.PROGRESS,
    queries.SCRUB_CALLS,
    queries.EVENTS_AFTER,
    queries.RECEIVED,
    queries.DELIVERY_COUNT,
    queries.ATTEMPT_COUNT,
    queries.DELETE_EVENTS,
    queries.IDEMPOTENT_AFTER,
    queries.DELETE_IDEMPOTENT,
    queries.NOTICE_TARGETS,
)


def ready(db: Database) -> None:
    """The job's statements compiled at the worker's start, not on the path of its first runs."""
    for statement in _JOB_STATEMENTS:
        statement.compiled(db.dialect)


class Failures(Protocol):
    """How the loop logs its failures (the worker's ``_FailureLog``: an outage twice)."""

    def failed(self, exc: BaseException) -> None: ...

    def succeeded(self) -> None: ...


async def run_erasures(job: ErasureJob, stopping: asyncio.Event, failures: Failures) -> None:
    """A worker's loop: carry out unfinished erasures, looking for new ones every second; a
    failed attempt resumes from its last batch."""
    while not stopping.is_set():
        try:
            found = await job.run_next()
            failures.succeeded()
            if found:
                continue
        except Exception as exc:
            failures.failed(exc)
        try:
            await asyncio.wait_for(stopping.wait(), POLL_SECONDS)
        except TimeoutError:
            pass
