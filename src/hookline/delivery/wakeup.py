"""Waking delivery workers when there is new work, without slowing the request that made it.

Polling every ``delivery_poll_seconds`` is the safety net; wake-ups only cut latency, so losing
one (a NOTIFY sent while a listener reconnects) delays a delivery by at most one poll interval.

``storage.db.Database`` calls ``events_committed()`` after every commit of a transaction that
recorded an event or made a delivery due (``make_wakeup`` registers it); nobody calls it by hand.
On SQLite it may call it before the COMMIT of rows of an event, if the scheduler sleeps
(``scheduler_asleep``): the woken round then shares their COMMIT (``Database._wake_early``).

* In one process (SQLite, or PostgreSQL with the in-process worker): ``events_committed()`` sets
  asyncio events the worker's loops wait on.
* Across processes on SQLite (``hookline serve --workers N``, or ``serve`` beside ``hookline
  worker``): ``SocketWakeup`` also sends a one-byte datagram to every worker on the database, each
  of which binds a Unix datagram socket in a folder beside the database file
  (``hookline.db-wakeup/``). Sending is non-blocking and coalesced per loop iteration; a full or
  dead peer is skipped (it was woken already, or it is gone). No database write, no round trip.
* Across processes (PostgreSQL): it also sends ``NOTIFY hookline_events``, coalesced so that a
  burst of requests costs one NOTIFY in flight at a time and no request waits for it; workers
  ``LISTEN`` on a dedicated connection (see ``Worker``). The payload is the sending ``Wakeup``'s
  ``origin``: a worker in the same process was already woken locally and ignores its own
  NOTIFYs, which would otherwise cost it a second, empty fan-out + claim round per event.
  Only while a worker of another process is registered (the ``workers`` table, looked at
  again once ``LOOK_SECONDS`` have passed), as the datagrams go only to the sockets in the
  folder: with the worker in process alone, or no worker at all, a NOTIFY would be a statement
  per batch of POSTs that nobody hears.
  A worker that registers after a look misses the wake-ups until the next look, at most
  ``LOOK_SECONDS`` later, so for that long after it registers it fans out on a short poll
  (``unheard_seconds``, ``Worker.start``) instead of waiting for its poll interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from hookline.settings import Settings
from hookline.storage.db import Database
from hookline.storage.queries.workers import HEARTBEATS, NOTIFY

log = logging.getLogger("hookline.delivery")

NOTIFY_CHANNEL = "hookline_events"
LOOK_SECONDS = 1.0
"""PostgreSQL: how long a look at the registered workers decides whether to NOTIFY."""


class Wakeup:
    """The object the API keeps in ``app.state.wakeup``."""

    def __init__(self) -> None:
        self._subscribers: list[asyncio.Event] = []
        self.origin = uuid.uuid4().hex
        """Sent as the NOTIFY payload, so this process can tell its own NOTIFYs apart."""
        self._on_close: list[Callable[[], None]] = []
        self._local_workers: set[str] = set()
        """The ids of the workers this wake-up wakes in process (``serves``)."""
        self._sleeping: list[asyncio.Event] = []

    def serves(self, worker_id: str) -> None:
        """The worker ``worker_id`` is woken by this wake-up in process: no other process
        needs to be told of its events (``PostgresWakeup``)."""
        self._local_workers.add(worker_id)

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

    @contextlib.contextmanager
    def asleep(self, event: asyncio.Event) -> Iterator[None]:
        """The block is a sleep of the subscriber of ``event`` (the scheduler) until it is set."""
        self._sleeping.append(event)
        try:
            yield
        finally:
            self._sleeping.remove(event)

    def scheduler_asleep(self) -> bool:
        """Whether a wake-up now would wake a subscriber from its sleep (``asleep``): one not
        woken already, whose next step then goes for the writer."""
        return any(not event.is_set() for event in self._sleeping)

    def wake_local(self) -> None:
        """Wake this process's workers only (what a received NOTIFY does)."""
        for event in self._subscribers:
            event.set()

    def events_committed(self) -> None:
        """After a transaction that inserted events (or made a delivery due) committed: called
        by ``storage.db.Database``. Synchronous and non-blocking."""
        self.wake_local()

    def receive_from_other_processes(self) -> None:
        """Start taking other processes' wake-ups, for a worker in this process (PostgreSQL:
        the worker LISTENs itself)."""

    @property
    def unheard_seconds(self) -> float:
        """How long after a worker registers other processes' commits may still not wake it:
        the worker fans out on a short poll for that long (``Worker.start``). None here: a
        commit tells every worker there is."""
        return 0.0

    async def close(self) -> None:
        """Stop being called, and release connections (none here)."""
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()


# A Unix socket's path must fit in sun_path (108 bytes on Linux, with its NUL); past that the
# folder is reached through this process's descriptor of it (Linux's /proc/self/fd).
_SUN_PATH_MAX = 107
_DATAGRAM = b"w"


class SocketWakeup(Wakeup):
    """``Wakeup`` that also tells workers in other processes on the same SQLite database, with
    datagrams on Unix sockets in ``<database>-wakeup/`` (one per worker, named after its pid
    and origin, so a name is never reused)."""

    def __init__(self, database_path: Path) -> None:
        super().__init__()
        self._folder = Path(f"{database_path.resolve()}-wakeup")
        self._folder_fd: int | None = None
        self._own_name = f"{os.getpid()}-{self.origin[:12]}"
        self._receiver: socket.socket | None = None
        self._sender: socket.socket | None = None
        self._peers: list[str] = []
        self._listed_at: int | None = None  # the folder's mtime when _peers was listed
        self._flush_scheduled = False
        self._closed = False

    def _address(self, name: str) -> str:
        path = str(self._folder / name)
        if len(os.fsencode(path)) <= _SUN_PATH_MAX:
            return path
        if self._folder_fd is None:
            self._folder_fd = os.open(self._folder, os.O_RDONLY | os.O_DIRECTORY)
        return f"/proc/self/fd/{self._folder_fd}/{name}"

    def receive_from_other_processes(self) -> None:
        if self._receiver is not None or self._closed:
            return
        receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            self._folder.mkdir(mode=0o700, exist_ok=True)
            receiver.setblocking(False)
            receiver.bind(self._address(self._own_name))
        except OSError as exc:
            receiver.close()
            log.warning(
                "cannot take wake-ups from other processes in %s (%s); polling every "
                "HOOKLINE_DELIVERY_POLL_SECONDS for their events",
                self._folder,
                exc.strerror or type(exc).__name__,
            )
            return
        self._receiver = receiver
        asyncio.get_running_loop().add_reader(receiver.fileno(), self._on_datagrams)

    def scheduler_asleep(self) -> bool:
        # Never beside workers of other processes on this database (``serve --workers N``):
        # they write too, and a batch held open for this scheduler's round keeps their writers
        # waiting at the turnstile for a turn of this loop. There the round commits apart.
        return super().scheduler_asleep() and not self._current_peers()

    def _on_datagrams(self) -> None:
        assert self._receiver is not None
        with contextlib.suppress(BlockingIOError):
            while self._receiver.recv(16):  # drain: one wake-up covers them all
                pass
        self.wake_local()

    def events_committed(self) -> None:
        super().events_committed()
        if self._flush_scheduled or self._closed:
            return
        try:
            asyncio.get_running_loop().call_soon(self._tell_peers)
        except RuntimeError:  # no running loop (a sync caller): polling will find the work
            return
        self._flush_scheduled = True

    def _tell_peers(self) -> None:
        # Requests committed in this loop iteration share one datagram per peer.
        self._flush_scheduled = False
        if self._closed:
            return
        for name in self._current_peers():
            try:
                self._sending_socket().sendto(_DATAGRAM, self._address(name))
            except BlockingIOError:
                pass  # its queue is full of wake-ups it has not read yet: it is awake
            except (ConnectionRefusedError, FileNotFoundError):
                self._forget(name)  # its process is gone (a name is never reused)
            except OSError:
                log.warning("waking worker %s failed; it will poll", name, exc_info=True)

    def _current_peers(self) -> list[str]:
        """The other workers' sockets; listed again only when the folder changed."""
        try:
            changed = os.stat(self._folder).st_mtime_ns
        except FileNotFoundError:
            return []
        if changed != self._listed_at:
            self._listed_at = changed
            self._peers = [name for name in os.listdir(self._folder) if name != self._own_name]
        return self._peers

    def _sending_socket(self) -> socket.socket:
        if self._sender is None:
            self._sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._sender.setblocking(False)
        return self._sender

    def _forget(self, name: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._address(name))
        if name in self._peers:
            self._peers.remove(name)

    async def close(self) -> None:
        await super().close()
        self._closed = True
        if self._receiver is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._receiver.fileno())
            self._forget(self._own_name)
            self._receiver.close()
            self._receiver = None
        if self._sender is not None:
            self._sender.close()
            self._sender = None
        if self._folder_fd is not None:
            os.close(self._folder_fd)
            self._folder_fd = None


class PostgresWakeup(Wakeup):
    """``Wakeup`` that also tells workers in other processes, with ``pg_notify``."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self._db = db
        self._wanted = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._elsewhere = True
        """Whether a worker of another process was registered at the last look."""
        self._looked_at = -math.inf

    @property
    def unheard_seconds(self) -> float:
        # Another process's look from before the worker registered stands this long.
        return LOOK_SECONDS

    def events_committed(self) -> None:
        super().events_committed()
        if self._closed:
            return
        if not self._elsewhere and time.monotonic() - self._looked_at < LOOK_SECONDS:
            return  # nobody to tell: not even a task
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
                if not await self._workers_elsewhere():
                    continue
                # One statement on the asyncpg pool, in autocommit: one round trip, where a
                # SQLAlchemy connection took three (BEGIN, SELECT, COMMIT).
                await self._db.fetch_one(NOTIFY, {"channel": NOTIFY_CHANNEL, "origin": self.origin})
            except Exception:
                log.warning("NOTIFY %s failed; workers will poll", NOTIFY_CHANNEL, exc_info=True)
                return

    async def _workers_elsewhere(self) -> bool:
        """Whether a worker this wake-up does not serve is registered, by a look at most
        ``LOOK_SECONDS`` old. A worker that died unregistered counts until a worker reaps its
        row: NOTIFYs for nobody, as before this look."""
        now = time.monotonic()
        if now - self._looked_at >= LOOK_SECONDS:
            rows = await self._db.fetch_all(HEARTBEATS, {})
            self._elsewhere = any(row.id not in self._local_workers for row in rows)
            self._looked_at = now
        return self._elsewhere

    async def close(self) -> None:
        await super().close()  # no commit reaches it any more
        if self._task is not None and not self._task.done():
            try:
                # The commits before this one still wake the other processes' workers.
                await asyncio.wait_for(asyncio.shield(self._task), 2.0)
            except (TimeoutError, Exception):
                self._task.cancel()
        self._closed = True


def make_wakeup(settings: Settings, db: Database) -> Wakeup:
    """The process's ``Wakeup``, called by ``db`` after every commit that queued work."""
    wakeup = _wakeup_for(settings, db)
    db.on_events_committed(wakeup.events_committed, asleep=wakeup.scheduler_asleep)
    wakeup.closing(lambda: db.off_events_committed(wakeup.events_committed))
    return wakeup


def _wakeup_for(settings: Settings, db: Database) -> Wakeup:
    path = settings.sqlite_path
    if path is None:
        return PostgresWakeup(db)
    if str(path) in ("", ":memory:") or str(path).startswith("file:"):
        return Wakeup()  # a database no other process can open
    return SocketWakeup(path)
