"""timeutil: the contract's timestamp spelling."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookline import timeutil
from hookline.timeutil import iso, parse_iso, to_millis, utcnow

OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
MODERN = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))


def test_iso_spells_utc_with_milliseconds_and_z() -> None:
    assert iso(datetime(2026, 11, 22, 15, 4, 5, 123999, tzinfo=UTC)) == "2026-11-22T15:04:05.123Z"
    assert iso(datetime(2026, 11, 22, 15, 4, 5)) == "2026-11-22T15:04:05.000Z"  # naive = UTC
    assert iso(None) is None
    assert iso(datetime(999, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)) == "0999-01-02T03:04:05.006Z"


def test_iso_spells_days_right_after_its_table_of_days_starts_again() -> None:
    first = datetime(2026, 11, 22, 23, 59, 59, 999999, tzinfo=UTC)
    days = [first + timedelta(days=n) for n in range(5000)]  # more days than the table keeps
    for day in days + days[:3]:
        assert iso(day) == day.isoformat(timespec="milliseconds")[:-6] + "Z"


@given(MODERN, st.one_of(st.none(), st.just(UTC), OFFSETS))
def test_iso_is_the_utc_instant_truncated_to_the_millisecond(
    naive: datetime, zone: timezone | None
) -> None:
    value = naive if zone is None else naive.replace(tzinfo=zone)
    as_utc = naive.replace(tzinfo=UTC) if zone is None else value.astimezone(UTC)
    expected = (
        f"{as_utc.year:04d}-{as_utc.month:02d}-{as_utc.day:02d}T{as_utc.hour:02d}:"
        f"{as_utc.minute:02d}:{as_utc.second:02d}.{as_utc.microsecond // 1000:03d}Z"
    )
    assert iso(value) == expected
    assert parse_iso(expected) == to_millis(as_utc)


AWARE = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
)


@given(AWARE)
def test_utcnow_is_the_clock_truncated_to_the_millisecond(clock: datetime) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(timeutil, "_clock", lambda zone: clock.astimezone(zone))
        now = utcnow()
    assert now.tzinfo is UTC
    assert now == to_millis(clock)
    assert now.microsecond % 1000 == 0 and clock - now < timedelta(milliseconds=1)


def test_utcnow_reads_the_clock() -> None:
    before = to_millis(datetime.now(UTC))
    now = utcnow()
    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC)
