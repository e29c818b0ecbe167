"""Handing SQLite's write lock from one process to the next without sleeping.

Several processes on one SQLite file (``hookline serve --workers N``) each have a group-commit
writer, and SQLite lets one write at a time. A process that finds the lock taken waited in
SQLite's busy handler, which sleeps 1, 2, 5, 10 ... up to 100 ms between tries: the holder's
next batch takes the lock in the instant between two of its own transactions, and the sleeper
misses it again and again. Measured with two processes writing flat out: 848 transactions/s
between them (one alone: 1,345) and a p99 of 1.3 s.

So writers first queue on a ``flock`` on ``<database>-writer.lock``, held from ``BEGIN
IMMEDIATE`` to the end of ``COMMIT``/``ROLLBACK``. The kernel wakes a waiting process as soon as
the holder lets go, and releases the lock of a process that dies. SQLite's own lock stays the
rule: this only decides who asks for it next (a writer that does not take the turnstile, such as
an older version, is still serialised by SQLite, as before).

``flock``, not ``fcntl``'s POSIX locks: those belong to the whole process, so the kernel's
deadlock check saw a cycle where there was none (this process's thread waiting here while its
event loop briefly held the rate limiter's lock that the other process wanted) and failed a
request with EDEADLK. A ``flock`` belongs to an open file, so each process opens the file itself
(``place_for``, after a fork too); one turnstile per file per process, counted, so that only the
process's first taker locks and its last releaser unlocks. In-process writers queue in
``_GroupCommit`` already.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading

_TURNSTILES: dict[str, WriteTurnstile] = {}


class WriteTurnstile:
    """``release()`` may be called from any thread: a batch's COMMIT thread hands the lock over
    as soon as its fsync returns (``connector._Batch``). ``_count`` orders the holders' count and
    the ``flock`` calls that follow from it between the loop and such a thread."""

    def __init__(self, database_path: str) -> None:
        self._fd = os.open(f"{database_path}-writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
        self.pid = os.getpid()
        self._holders = 0
        self._count = threading.Lock()

    async def acquire(self) -> None:
        if self._join_or_lock_now():
            return
        # Another process holds it: wait on a thread, woken when it lets go.
        waiting = asyncio.ensure_future(asyncio.to_thread(self._lock_when_free))
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            # The thread goes on and will get the lock: give it back when it does.
            waiting.add_done_callback(self._release_if_taken)
            raise

    def _release_if_taken(self, waiting: asyncio.Future[None]) -> None:
        if not waiting.cancelled() and waiting.exception() is None:
            self.release()

    def _join_or_lock_now(self) -> bool:
        with self._count:
            if self._holders == 0:
                try:
                    fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    return False
            self._holders += 1
            return True

    def _lock_when_free(self) -> None:
        # Blocking, so outside ``_count``; a second taker of this process meanwhile waits here
        # too, and both get it at once (a flock belongs to the open file, which is this one).
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        with self._count:
            self._holders += 1

    def release(self) -> None:
        with self._count:
            if self._holders == 0:
                return
            self._holders -= 1
            if self._holders == 0:
                with contextlib.suppress(OSError):
                    fcntl.flock(self._fd, fcntl.LOCK_UN)


class TurnstilePlace:
    """One connection's place at its file's turnstile: releases only what it acquired."""

    __slots__ = ("_held", "_turnstile")

    def __init__(self, turnstile: WriteTurnstile) -> None:
        self._turnstile = turnstile
        self._held = False

    async def acquire(self) -> None:
        if not self._held:
            await self._turnstile.acquire()
            self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._turnstile.release()


def place_for(database_path: str) -> TurnstilePlace | None:
    """A connection's place at this process's turnstile for a database file (None for an
    in-memory database, which no other process can open)."""
    if database_path in ("", ":memory:") or database_path.startswith("file:"):
        return None
    path = os.path.abspath(database_path)
    known = _TURNSTILES.get(path)
    if known is None or known.pid != os.getpid():  # a forked child opens its own
        try:
            _TURNSTILES[path] = WriteTurnstile(path)
        except OSError:  # a folder we may not write to: SQLite's busy handler alone, as before
            return None
    return TurnstilePlace(_TURNSTILES[path])
