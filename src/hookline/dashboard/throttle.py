"""Log-in throttling, in memory: too many failures per account or per client address → 429.

Deliberately small and self-contained (one process; state is lost on restart, which only ever
lets someone try again sooner). A shared limiter for several processes belongs elsewhere.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

WINDOW_SECONDS = 15 * 60
MAX_FAILURES_PER_ACCOUNT = 5
# One address may be a whole office behind NAT, so it gets more room than one account.
MAX_FAILURES_PER_ADDRESS = 20
# Bounds memory under a flood of distinct emails: the stalest keys are forgotten first.
MAX_TRACKED_KEYS = 50_000


class LoginThrottle:
    def __init__(
        self,
        *,
        per_account: int = MAX_FAILURES_PER_ACCOUNT,
        per_address: int = MAX_FAILURES_PER_ADDRESS,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_account = per_account
        self.per_address = per_address
        self.window = window
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, key: str) -> deque[float]:
        failures = self._failures.get(key)
        if failures is None:
            return deque()
        horizon = self._clock() - self.window
        while failures and failures[0] <= horizon:
            failures.popleft()
        if not failures:
            del self._failures[key]
        return failures

    def retry_after(self, email: str, address: str) -> int | None:
        """Seconds until another attempt is allowed, or None when it is allowed now."""
        waits = []
        for key, limit in (
            (f"account:{email}", self.per_account),
            (f"address:{address}", self.per_address),
        ):
            failures = self._recent(key)
            if len(failures) >= limit:
                waits.append(failures[-limit] + self.window - self._clock())
        if not waits:
            return None
        return max(1, math.ceil(max(waits)))

    def record_failure(self, email: str, address: str) -> None:
        now = self._clock()
        for key in (f"account:{email}", f"address:{address}"):
            failures = self._failures.setdefault(key, deque())
            failures.append(now)
            self._failures.move_to_end(key)
        while len(self._failures) > MAX_TRACKED_KEYS:
            self._failures.popitem(last=False)

    def record_success(self, email: str) -> None:
        # Only the account's count is cleared: a valid login must not reset an address that is
        # guessing at other accounts.
        self._failures.pop(f"account:{email}", None)
