"""Retry policy: pure functions from an attempt's outcome to what happens next.

Nothing here touches the database, the clock or the network (the caller passes ``now`` and a
random source), so every rule is unit-testable.

The schedule (``HOOKLINE_RETRY_SCHEDULE``) lists the waits before attempts 2..N, each counted
from the previous attempt: the default ``5,300,1800,7200,18000,36000,36000`` is 8 attempts over
about 27.6 hours, as the contract says (waits from the *first* attempt would only span 10 h).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import ClassVar, Literal

from hookline.settings import Settings

# A receiver's Retry-After may push an attempt back, but not park a delivery indefinitely: past
# a day the delivery would outlive the whole schedule, so the hint is capped.
MAX_RETRY_AFTER_SECONDS = 24 * 3600.0
RETRY_AFTER_STATUSES = frozenset({429, 503})
DEFAULT_JITTER = 0.2

RandomSource = Callable[[], float]
"""Returns a float in [0, 1), like ``random.random``."""


# -- errors an attempt can end with (no HTTP status) ----------------------------------------


class DeliveryError(Exception):
    """An attempt that got no usable HTTP response. ``retryable`` says whether to try again."""

    retryable: ClassVar[bool] = True
    label: ClassVar[str] = "error"

    def __str__(self) -> str:
        detail = super().__str__()
        return f"{self.label}: {detail}" if detail else self.label


class ConnectFailed(DeliveryError):
    """DNS failure, refused or reset connection, TLS failure: the endpoint may come back."""

    label = "connection failed"


class AttemptTimedOut(DeliveryError):
    label = "timeout"


class BlockedTarget(DeliveryError):
    """The URL resolves only to addresses we refuse to connect to. Retryable: DNS changes, and
    the owner may fix the record before the schedule runs out."""

    label = "blocked"


class InvalidTarget(DeliveryError):
    """The stored URL cannot be requested at all; retrying cannot help."""

    retryable = False
    label = "invalid url"


# -- classification --------------------------------------------------------------------------


class Outcome(enum.Enum):
    SUCCEEDED = "succeeded"
    RETRYABLE = "retryable"  # non-2xx (3xx included: redirects are not followed), network errors
    PERMANENT = "permanent"  # no point retrying this delivery
    GONE = "gone"  # 410: the receiver asks us to stop; the webhook is disabled


def classify(status_code: int | None, error: DeliveryError | None) -> Outcome:
    if status_code is None:
        if error is not None and not error.retryable:
            return Outcome.PERMANENT
        return Outcome.RETRYABLE
    if 200 <= status_code < 300:
        return Outcome.SUCCEEDED
    if status_code == 410:
        return Outcome.GONE
    return Outcome.RETRYABLE


# -- schedule --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    delays: tuple[float, ...]
    jitter: float = DEFAULT_JITTER
    max_retry_after: float = MAX_RETRY_AFTER_SECONDS

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(delays=settings.retry_delays)

    @property
    def max_attempts(self) -> int:
        return len(self.delays) + 1

    def base_delay(self, attempts_made: int) -> float | None:
        """Wait before attempt ``attempts_made + 1``; None when the schedule is used up."""
        if attempts_made < 1 or attempts_made > len(self.delays):
            return None
        return self.delays[attempts_made - 1]


def jittered(delay: float, jitter: float, rng: RandomSource) -> float:
    """``delay`` scaled by a factor uniform in [1 - jitter, 1 + jitter): retries of many
    deliveries that failed together (an endpoint outage) spread out instead of stampeding."""
    return max(0.0, delay * (1.0 + jitter * (2.0 * rng() - 1.0)))


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds from ``now`` asked for by a ``Retry-After`` header (delta-seconds or HTTP-date)."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; "-0000" parses naive
        when = when.replace(tzinfo=UTC)
    seconds = (when - now).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(frozen=True)
class Decision:
    """What an attempt's outcome means for its delivery."""

    status: Literal["succeeded", "pending", "failed"]
    delay: float | None = None
    """Seconds until the next attempt, when ``status`` is pending."""
    disable_webhook: bool = False
    """410: the receiver asked us to stop sending to this endpoint."""


def decide(
    policy: RetryPolicy,
    *,
    attempts_made: int,
    status_code: int | None,
    error: DeliveryError | None,
    retry_after: float | None,
    rng: RandomSource,
) -> Decision:
    """The delivery's next state after its ``attempts_made``-th attempt ended like this."""
    outcome = classify(status_code, error)
    if outcome is Outcome.SUCCEEDED:
        return Decision("succeeded")
    if outcome is Outcome.GONE:
        return Decision("failed", disable_webhook=True)
    if outcome is Outcome.PERMANENT:
        return Decision("failed")
    base = policy.base_delay(attempts_made)
    if base is None:
        return Decision("failed")
    delay = jittered(base, policy.jitter, rng)
    if status_code in RETRY_AFTER_STATUSES and retry_after is not None:
        # The receiver knows when it can take traffic again: never come back sooner than it
        # asked, never sooner than the schedule says, never later than the cap.
        delay = max(delay, min(retry_after, policy.max_retry_after))
    return Decision("pending", delay=delay)


# -- the per-endpoint circuit ----------------------------------------------------------------
#
# An endpoint that fails every attempt costs as much per attempt as a healthy one (a claim, a
# signature, a POST, an attempt row, an outcome), and beside a steady stream of events it would
# soak up the worker that healthy endpoints share. After CIRCUIT_OPEN_AFTER failed attempts in a
# row its circuit opens: claims take one of its deliveries at a time (a probe), no sooner than
# ``next_probe_at``, which each failed attempt sets a tenth of the failing run's age ahead (at
# least 1 s, at most CIRCUIT_PROBE_MAX_SECONDS): the longer it has been down, the rarer the
# probes. The first success closes it. Due times are never changed: the retry schedule is the
# earliest each attempt may start; while the circuit is open, attempts start later than due, in
# due order (docs/webhooks.md).

CIRCUIT_OPEN_AFTER = 10
CIRCUIT_PROBE_MIN_SECONDS = 1.0
CIRCUIT_PROBE_MAX_SECONDS = 30.0
CIRCUIT_PROBE_FRACTION = 0.1


def circuit_open(consecutive_failures: int) -> bool:
    """Whether an endpoint with this run of failed attempts is only probed."""
    return consecutive_failures >= CIRCUIT_OPEN_AFTER


def probe_delay(consecutive_failures: int, failing_for: float) -> float | None:
    """Seconds from a failed attempt to the next probe of its endpoint, which has failed
    ``consecutive_failures`` attempts in a row over ``failing_for`` seconds; None while its
    circuit is closed (no pacing)."""
    if not circuit_open(consecutive_failures):
        return None
    paced = CIRCUIT_PROBE_FRACTION * max(0.0, failing_for)
    return min(CIRCUIT_PROBE_MAX_SECONDS, max(CIRCUIT_PROBE_MIN_SECONDS, paced))
