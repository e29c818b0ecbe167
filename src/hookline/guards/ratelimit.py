"""Rate limiting: ``HOOKLINE_RATE_LIMIT`` per API key, per client address when unauthenticated.

A sliding window counter: the current and the previous window's counts, weighted by how far into
the current window we are. Constant memory and time per key (the exact moving window stores every
hit, so its cost grows with the limit).

With ``HOOKLINE_REDIS_URL`` set, the counters live in Redis, through the ``limits`` library, so
that several API processes (on several machines) enforce one budget. Without it, the processes of
one ``hookline serve --workers N`` share a table in memory (:class:`SharedWindows`), and a
single process keeps them in :class:`LocalWindows`: the same arithmetic as ``limits``' in-memory
storage (a test holds the two to the same answers), without its per-call costs (two awaited
calls, a lock per key, an expiry task), which profiles put at 10-15% of a
``GET /v1/contacts/{id}``.

Headers follow draft-ietf-httpapi-ratelimit-headers-09 (structured fields, one named policy):

    RateLimit-Policy: "default";q=100;w=1
    RateLimit: "default";r=57;t=1

``q`` is the quota, ``w`` the window in seconds, ``r`` what remains and ``t`` the seconds until a
unit of quota frees up. Every ``/v1`` response carries both; a 429 adds ``Retry-After``.

Where it hooks in: ``api.deps.authenticate`` calls :func:`charge_key` with the key it
authenticated; the front door (``api.front``) puts the headers on every ``/v1`` response and
charges the client address for responses no key paid for (:func:`settled`).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import math
import mmap
import os
import struct
import tempfile
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from limits import RateLimitItemPerSecond
from limits.aio.storage import RedisStorage, Storage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from starlette.types import Scope

from hookline.domain.keys import AuthContext
from hookline.errors import RateLimited
from hookline.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import ConnectionPool

log = logging.getLogger("hookline.ratelimit")

POLICY = "default"
STATE_KEY = "rate_limit"
# When Redis is down we fail open (availability over throttling) and say so, at most this often.
_OUTAGE_LOG_INTERVAL = 30.0


@dataclass(frozen=True, slots=True)
class RateLimitState:
    allowed: bool
    remaining: int
    reset_seconds: int

    def headers(self, policy: bytes) -> list[tuple[bytes, bytes]]:
        current = f'"{POLICY}";r={self.remaining};t={self.reset_seconds}'.encode()
        return [(b"ratelimit-policy", policy), (b"ratelimit", current)]

    @property
    def retry_after(self) -> int:
        return max(1, self.reset_seconds)


def _redis_storage(redis_url: str, pool: ConnectionPool) -> Storage:
    # limits wants async+redis:// (or async+rediss://); redis-py is the client we ship. The pool
    # is ours so that a server's shutdown can close its connections (limits has no close).
    # limits documents ``connection_pool`` but types its ``**options`` as scalars.
    return RedisStorage(
        f"async+{redis_url}",
        implementation="redispy",
        connection_pool=pool,  # type: ignore[arg-type]
    )


class LocalWindows:
    """Sliding window counters in this process's memory, as ``limits`` computes them.

    Windows are aligned on multiples of ``seconds`` since the epoch. A hit is allowed while the
    weighted count (the previous window's count times the share of it still inside the sliding
    window, plus the current window's) stays within ``amount``. Counters of windows that have
    slid out are dropped once per window, so memory follows the identities seen recently.
    """

    def __init__(self, amount: int, seconds: int) -> None:
        self.amount = amount
        self.seconds = seconds
        # identity -> (window number, previous window's count, current window's count)
        self._counts: dict[str, tuple[int, int, int]] = {}
        self._swept = 0

    def hit(self, identity: str, now: float) -> RateLimitState:
        window, elapsed = divmod(now, self.seconds)
        number = int(window)
        if number != self._swept:
            self._sweep(number)
        previous, current = _slid_to(number, self._load(identity))
        still_in = 1 - elapsed / self.seconds  # share of the previous window still counted
        weighted = previous * still_in + current
        allowed = math.floor(weighted) + 1 <= self.amount
        if allowed:
            current += 1
            weighted += 1
            self._save(identity, (number, previous, current))
        remaining = max(0, self.amount - math.floor(weighted))
        return RateLimitState(allowed, remaining, self._reset_in(previous, still_in))

    def _load(self, identity: str) -> tuple[int, int, int] | None:
        """(window number, previous window's count, that window's count), if seen lately."""
        return self._counts.get(identity)

    def _save(self, identity: str, counts: tuple[int, int, int]) -> None:
        self._counts[identity] = counts

    def _reset_in(self, previous: int, still_in: float) -> int:
        # When a unit of quota frees up, as limits' get_window_stats says: the next previous-window
        # hit to slide out, or else the end of the current window. limits takes that end modulo
        # the window, so at a window's very first instant it says 0, not a whole window.
        until_window_end = (still_in * self.seconds) % self.seconds
        reset = until_window_end
        if previous:
            reset = min(reset, until_window_end % (self.seconds / previous))
        return max(0, math.ceil(reset))

    def _sweep(self, number: int) -> None:
        self._swept = number
        stale = [key for key, (seen, _, _) in self._counts.items() if seen < number - 1]
        for key in stale:
            del self._counts[key]


def _slid_to(number: int, counts: tuple[int, int, int] | None) -> tuple[int, int]:
    """(previous, current) counts as of window ``number``, from those stored in another."""
    if counts is None:
        return 0, 0
    seen, previous, current = counts
    if seen == number:
        return previous, current
    if seen == number - 1:
        return current, 0
    return 0, 0


# One slot of the shared table: identity digest, window number, previous and current counts.
_SLOT = struct.Struct("<16sqqq")
SHARED_SLOTS = 1 << 16
_PROBES = 32
_EMPTY = bytes(16)


class SharedWindows(LocalWindows):
    """:class:`LocalWindows` whose counters live in memory shared by the processes of one
    ``hookline serve --workers N``, so a key's budget is one budget however many processes
    answer it, without Redis.

    The table (``SHARED_SLOTS`` slots, 2.6 MB) is a file mapped ``MAP_SHARED``, created by the
    supervisor before it forks; an identity is a 16-byte BLAKE2b digest at one of ``_PROBES``
    slots from its hash (open addressing; a slot whose window has slid out is free again). A
    hit holds a ``flock`` on the file: the kernel drops it if its holder is killed, which a lock
    in the shared memory itself would not. (Not ``fcntl``'s POSIX locks: they belong to the
    whole process, and the kernel's deadlock check then failed a hit with EDEADLK while a thread
    of the holder waited for storage.turnstile.) With more live identities than the table
    holds near one hash, the oldest of its slots is taken over (that identity starts over).
    """

    def __init__(self, amount: int, seconds: int, slots: int = SHARED_SLOTS) -> None:
        super().__init__(amount, seconds)
        self._slots = slots
        self._file = tempfile.TemporaryFile(prefix="hookline-ratelimit-")
        self._file.truncate(slots * _SLOT.size)
        self._table = mmap.mmap(self._file.fileno(), slots * _SLOT.size)
        self._slot_of: tuple[str, int, bytes] = ("", -1, _EMPTY)  # the last _load's
        self._locker: tuple[int, int] | None = None  # (pid, its own descriptor of the file)

    def hit(self, identity: str, now: float) -> RateLimitState:
        fd = self._lock_fd()
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            return super().hit(identity, now)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_fd(self) -> int:
        """This process's own open file of the table, for ``flock`` (a lock of an open file:
        the descriptor inherited from the supervisor is one open file shared by every child,
        so each process opens the file again, through /proc, since it has no name)."""
        if self._locker is None or self._locker[0] != os.getpid():
            own = os.open(f"/proc/self/fd/{self._file.fileno()}", os.O_RDWR)
            self._locker = (os.getpid(), own)
        return self._locker[1]

    def close(self) -> None:
        """Unmap the table and close this process's files of it (a server's table lives as long
        as the server; tests and tools that make one close it)."""
        if self._locker is not None and self._locker[0] == os.getpid():
            os.close(self._locker[1])
        self._locker = None
        self._table.close()
        self._file.close()

    def _sweep(self, number: int) -> None:
        self._swept = number  # nothing to drop: stale slots are reused in place

    def _load(self, identity: str) -> tuple[int, int, int] | None:
        digest = hashlib.blake2b(identity.encode(), digest_size=16).digest()
        start = int.from_bytes(digest[:8], "little") % self._slots
        reusable, oldest, oldest_window = -1, start, None
        for step in range(_PROBES):
            index = (start + step) % self._slots
            held, window, previous, current = _SLOT.unpack_from(self._table, index * _SLOT.size)
            if held == digest:
                self._slot_of = (identity, index, digest)
                return window, previous, current
            if reusable < 0 and (held == _EMPTY or window < self._swept - 1):
                reusable = index
            if oldest_window is None or window < oldest_window:
                oldest, oldest_window = index, window
        index = reusable if reusable >= 0 else oldest
        self._slot_of = (identity, index, digest)
        _SLOT.pack_into(self._table, index * _SLOT.size, digest, 0, 0, 0)
        return None

    def _save(self, identity: str, counts: tuple[int, int, int]) -> None:
        cached, index, digest = self._slot_of
        assert cached == identity, "_save follows _load of the same identity"
        _SLOT.pack_into(self._table, index * _SLOT.size, digest, *counts)


_shared: SharedWindows | None = None


def share_windows_across_processes(amount: int, seconds: int) -> None:
    """Call before forking the processes of one server: their limiters then share counters."""
    global _shared
    _shared = SharedWindows(amount, seconds)


class RateLimiter:
    """One process's view of the shared budget; lives on ``app.state.rate_limiter``."""

    def __init__(self, settings: Settings) -> None:
        amount, seconds = settings.rate_limit_parts
        self.item = RateLimitItemPerSecond(amount, seconds, namespace="hookline")
        self.policy_header = f'"{POLICY}";q={amount};w={seconds}'.encode()
        # Exactly one of the two: this process's counters, or limits' over the shared Redis.
        self._local: LocalWindows | None = None
        self._limiter: SlidingWindowCounterRateLimiter | None = None
        self._redis_pool: ConnectionPool | None = None
        if settings.redis_url:
            from redis.asyncio import ConnectionPool  # only a server that shares Redis needs it

            self._redis_pool = ConnectionPool.from_url(settings.redis_url)
            storage = _redis_storage(settings.redis_url, self._redis_pool)
            self._limiter = SlidingWindowCounterRateLimiter(storage)
        elif _shared is not None and (_shared.amount, _shared.seconds) == (amount, seconds):
            self._local = _shared
        else:
            self._local = LocalWindows(amount, seconds)
        self._last_outage_log = 0.0

    async def hit(self, identity: str) -> RateLimitState:
        """Charge one request to ``identity`` (``key:<id>`` or ``addr:<ip>``)."""
        if self._local is not None:
            return self._local.hit(identity, time.time())
        assert self._limiter is not None
        try:
            allowed = await self._limiter.hit(self.item, identity)
            reset_at, remaining = await self._limiter.get_window_stats(self.item, identity)
        except Exception as exc:  # a storage outage must not take the API down with it
            self._log_outage(exc)
            return RateLimitState(True, self.item.amount, self.item.get_expiry())
        reset = max(0, math.ceil(reset_at - time.time()))
        return RateLimitState(allowed, max(0, remaining), reset)

    async def aclose(self) -> None:
        """Close the connections to Redis, if any (the app's lifespan ends with this; a later
        hit would connect again)."""
        if self._redis_pool is not None:
            await self._redis_pool.aclose()

    def _log_outage(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._last_outage_log >= _OUTAGE_LOG_INTERVAL:
            self._last_outage_log = now
            log.warning("rate-limit storage unavailable, not limiting: %s", type(exc).__name__)


async def charge_key(
    state: dict[str, object], limiter: RateLimiter | None, context: AuthContext
) -> None:
    """Charge the request (its ASGI ``state``) to its API key; 429 past the budget. Called by
    ``authenticate``."""
    if limiter is None:
        return
    limit = await limiter.hit(key_identity(context))
    state[STATE_KEY] = limit
    if not limit.allowed:
        raise over_budget(limit)


def key_identity(context: AuthContext) -> str:
    """Whom a request authenticated with this key is charged to."""
    return f"key:{context.key_id}"


def over_budget(state: RateLimitState) -> RateLimited:
    """The 429 of a request its key's budget refused."""
    return RateLimited(headers={"Retry-After": str(state.retry_after)})


def _client_identity(scope: Scope) -> str:
    client = scope.get("client")
    return f"addr:{client[0] if client else 'unknown'}"


async def settled(scope: Scope, limiter: RateLimiter) -> RateLimitState:
    """The request's rate-limit state: its key's charge, or, when no key paid for it (a 401, an
    unknown route, a 413), a charge to the client's address now, so a flood of bad keys is
    throttled too."""
    state: RateLimitState | None = scope.get("state", {}).get(STATE_KEY)
    if state is None:
        state = await limiter.hit(_client_identity(scope))
        scope.setdefault("state", {})[STATE_KEY] = state
    return state
