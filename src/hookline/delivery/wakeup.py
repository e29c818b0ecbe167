"""Waking delivery workers when there is new work, without slowing the request that made it.

Polling every ``delivery_poll_seconds`` is the safety net; wake-ups only cut latency, so losing
one (a NOTIFY sent while a listener reconnects) delays a delivery by at most one poll interval.

``storage.db.Database`` calls ``events_committed()`` after every commit of a transaction that
recorded an event or made a delivery due (``make_wakeup`` registers it); nobody calls it by hand.

* In one process (SQLite, or PostgreSQL with the in-process worker): ``events_committed()`` sets
  asyncio events the worker's loops wait on.
* Across processes (PostgreSQL): it also sends ``NOTIFY hookline_events``, coalesced so that a
  burst of requests costs one NOTIFY in flight at a time and no request waits for it; workers
  ``LISTEN`` on a dedicated connection (see ``Worker``). The payload is the sending ``Wakeup``'s
  ``origin``: a worker in the same process was already woken locally and ignores its own
  NOTIFYs, which would otherwise cost it a second, empty fan-out + claim round per event.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable

from sqlalchemy import bindparam, func, select

from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.storage.statements import Query

log = logging.getLogger("hookline.delivery")

NOTIFY_CHANNEL = "hookline_events"
_NOTIFY = Query(select(func.pg_notify(bindparam("channel"), bindparam("origin")).label("notified")))


class Wakeup:
    """The object the API keeps in ``app.state.wakeup``."""

    def __init__(self) -> None:
        self._subscribers: list[asyncio.Event] = []
        self.origin = uuid.uuid4().hex
        """Sent as the NOTIFY payload, so this process can tell its own NOTIFYs apart."""
        self._on_close: list[Callable[[], None]] = []

    def closing(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when this wake-up is closed."""
        self._on_close.append(callback)

    def subscribe(self) -> asyncio.Event:
        """An event set on every wake-up (the subscriber clears it)."""
        event = asyncio.Event()
        self._subscribers.append(event)
        return event

    def unsubscribe(self, event: asyncio.Event) -> None:
        if event in self._subscribers:
            self._subscribers.remove(event)

    def wake_local(self) -> None:
        """Wake this process's workers only (what a received NOTIFY does)."""
        for event in self._subscribers:
            event.set()

    def events_committed(self) -> None:
        """After a transaction that inserted events (or made a delivery due) committed: called
        by ``storage.db.Database``. Synchronous and non-blocking."""
        self.wake_local()

    async def close(self) -> None:
        """Stop being called, and release connections (none here)."""
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()


class PostgresWakeup(Wakeup):
    """``Wakeup`` that also tells workers in other processes, with ``pg_notify``."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self._db = db
        self._wanted = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def events_committed(self) -> None:
        super().events_committed()
        if self._closed:
            return
        self._wanted = True
        if self._task is None or self._task.done():
            try:
                self._task = asyncio.get_running_loop().create_task(self._notify_loop())
            except RuntimeError:  # no running loop (a sync caller): polling will find the work
                self._wanted = False

    async def _notify_loop(self) -> None:
        # Requests arriving while a NOTIFY is in flight just set _wanted: one more follows.
        while self._wanted and not self._closed:
            self._wanted = False
            try:
                # One statement on the asyncpg pool, in autocommit: one round trip, where a
                # SQLAlchemy connection took three (BEGIN, SELECT, COMMIT).
                await self._db.fetch_one(
                    _NOTIFY, {"channel": NOTIFY_CHANNEL, "origin": self.origin}
                )
            except Exception:
                log.warning("NOTIFY %s failed; workers will poll", NOTIFY_CHANNEL, exc_info=True)
                return

    async def close(self) -> None:
        await super().close()
        self._closed = True
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2.0)
            except (TimeoutError, Exception):
                self._task.cancel()


def make_wakeup(settings: Settings, db: Database) -> Wakeup:
    """The process's ``Wakeup``, called by ``db`` after every commit that queued work."""
    wakeup = PostgresWakeup(db) if settings.is_postgres else Wakeup()
    db.on_events_committed(wakeup.events_committed)
    wakeup.closing(lambda: db.off_events_committed(wakeup.events_committed))
    return wakeup
