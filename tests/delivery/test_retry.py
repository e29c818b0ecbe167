"""The pure retry policy: schedule, jitter, Retry-After, classification."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookline.delivery.retry import (
    CIRCUIT_OPEN_AFTER,
    MAX_RETRY_AFTER_SECONDS,
    AttemptTimedOut,
    BlockedTarget,
    ConnectFailed,
    DeliveryError,
    InvalidTarget,
    Outcome,
    RetryPolicy,
    circuit_open,
    classify,
    decide,
    jittered,
    parse_retry_after,
    probe_delay,
)
from hookline.settings import DEFAULT_RETRY_SCHEDULE, Settings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
POLICY = RetryPolicy(delays=(5.0, 300.0, 1800.0))


def middle() -> float:
    return 0.5


unit = st.floats(min_value=0.0, max_value=1.0, exclude_max=True)


def test_default_schedule_is_eight_attempts_over_about_27_hours() -> None:
    policy = RetryPolicy.from_settings(Settings(retry_schedule=DEFAULT_RETRY_SCHEDULE))
    assert policy.max_attempts == 8
    assert 27 * 3600 < sum(policy.delays) < 28 * 3600


@given(delays=st.lists(st.floats(0, 1e6), min_size=1, max_size=20), r=unit)
def test_schedule_length_bounds_the_attempts(delays: list[float], r: float) -> None:
    policy = RetryPolicy(delays=tuple(delays))
    for made in range(1, len(delays) + 1):
        decision = decide(
            policy,
            attempts_made=made,
            status_code=500,
            error=None,
            retry_after=None,
            rng=lambda: r,
        )
        assert decision.status == "pending"
    last = decide(
        policy,
        attempts_made=len(delays) + 1,
        status_code=500,
        error=None,
        retry_after=None,
        rng=lambda: r,
    )
    assert last.status == "failed"


@given(delay=st.floats(0, 1e7), r=unit)
def test_jitter_stays_within_twenty_percent(delay: float, r: float) -> None:
    value = jittered(delay, 0.2, lambda: r)
    assert delay * 0.8 - 1e-6 <= value <= delay * 1.2 + 1e-6


def test_jitter_reaches_both_ends() -> None:
    assert jittered(100, 0.2, lambda: 0.0) == pytest.approx(80)
    assert jittered(100, 0.2, middle) == pytest.approx(100)
    assert jittered(100, 0.2, lambda: 0.999999) == pytest.approx(120, rel=1e-4)


@pytest.mark.parametrize(
    ("status", "error", "outcome"),
    [
        (200, None, Outcome.SUCCEEDED),
        (204, None, Outcome.SUCCEEDED),
        (299, None, Outcome.SUCCEEDED),
        (301, None, Outcome.RETRYABLE),
        (302, None, Outcome.RETRYABLE),
        (400, None, Outcome.RETRYABLE),
        (404, None, Outcome.RETRYABLE),
        (410, None, Outcome.GONE),
        (429, None, Outcome.RETRYABLE),
        (500, None, Outcome.RETRYABLE),
        (None, AttemptTimedOut(), Outcome.RETRYABLE),
        (None, ConnectFailed("refused"), Outcome.RETRYABLE),
        (None, BlockedTarget(), Outcome.RETRYABLE),
        (None, InvalidTarget("x"), Outcome.PERMANENT),
    ],
)
def test_classify(status: int | None, error: DeliveryError | None, outcome: Outcome) -> None:
    assert classify(status, error) is outcome


def test_errors_say_what_they_are() -> None:
    assert str(AttemptTimedOut("no response within 15s")) == "timeout: no response within 15s"
    assert str(BlockedTarget("resolves to a private address")) == (
        "blocked: resolves to a private address"
    )
    assert AttemptTimedOut.retryable and not InvalidTarget.retryable


def test_success_and_gone_decisions() -> None:
    ok = decide(POLICY, attempts_made=1, status_code=200, error=None, retry_after=None, rng=middle)
    assert ok.status == "succeeded"
    gone = decide(
        POLICY, attempts_made=1, status_code=410, error=None, retry_after=None, rng=middle
    )
    assert gone.status == "failed" and gone.disable_webhook


def test_delays_follow_the_schedule_from_attempt_to_attempt() -> None:
    delays = [
        decide(
            POLICY, attempts_made=n, status_code=500, error=None, retry_after=None, rng=middle
        ).delay
        for n in (1, 2, 3)
    ]
    assert delays == [5.0, 300.0, 1800.0]


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_pushes_the_next_attempt_back(status: int) -> None:
    later = decide(
        POLICY, attempts_made=1, status_code=status, error=None, retry_after=120, rng=middle
    )
    assert later.delay == 120
    # Never sooner than the schedule.
    sooner = decide(
        POLICY, attempts_made=2, status_code=status, error=None, retry_after=1, rng=middle
    )
    assert sooner.delay == 300
    # Capped.
    huge = decide(
        POLICY, attempts_made=1, status_code=status, error=None, retry_after=1e9, rng=middle
    )
    assert huge.delay == MAX_RETRY_AFTER_SECONDS


def test_retry_after_is_ignored_on_other_statuses_and_after_the_last_attempt() -> None:
    other = decide(
        POLICY, attempts_made=1, status_code=500, error=None, retry_after=999, rng=middle
    )
    assert other.delay == 5.0
    last = decide(POLICY, attempts_made=4, status_code=429, error=None, retry_after=10, rng=middle)
    assert last.status == "failed"


def test_parse_retry_after() -> None:
    assert parse_retry_after("120", NOW) == 120
    assert parse_retry_after(" 0 ", NOW) == 0
    date = format_datetime(NOW + timedelta(seconds=90), usegmt=True)
    assert parse_retry_after(date, NOW) == pytest.approx(90)
    past = format_datetime(NOW - timedelta(days=1), usegmt=True)
    assert parse_retry_after(past, NOW) == 0
    for junk in (None, "", "soon", "-5", "1.5e3"):
        assert parse_retry_after(junk, NOW) is None


def test_the_circuit_opens_at_its_threshold_and_paces_probes_by_the_failing_runs_age() -> None:
    assert not circuit_open(CIRCUIT_OPEN_AFTER - 1)
    assert circuit_open(CIRCUIT_OPEN_AFTER)
    assert probe_delay(CIRCUIT_OPEN_AFTER - 1, 3600) is None  # closed: no pacing
    assert probe_delay(CIRCUIT_OPEN_AFTER, 0.5) == 1.0  # at least a second
    assert probe_delay(CIRCUIT_OPEN_AFTER, 60) == 6.0  # a tenth of the run's age
    assert probe_delay(CIRCUIT_OPEN_AFTER + 500, 3600) == 30.0  # at most 30 s
    assert probe_delay(CIRCUIT_OPEN_AFTER, -5) == 1.0  # clock skew between workers
