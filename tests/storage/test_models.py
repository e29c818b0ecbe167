"""``storage.models``: the timestamp type reads back what it stored, in UTC, on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import DateTime

from hookline.storage.connector import SQLITE_DIALECT
from hookline.storage.models import UTCDateTime

_TYPE = UTCDateTime().dialect_impl(SQLITE_DIALECT)
_READ_OR_NONE = _TYPE.result_processor(SQLITE_DIALECT, None)
assert _READ_OR_NONE is not None
_READ = _READ_OR_NONE
_WRITE = _TYPE.bind_processor(SQLITE_DIALECT)


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 11, 22, 15, 4, 5, 123000, tzinfo=UTC),
        datetime(2026, 11, 22, 15, 4, 5, tzinfo=UTC),  # no fraction
        datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_a_stored_timestamp_reads_back_equal_and_in_utc(value: datetime) -> None:
    stored = _WRITE(value) if _WRITE else value
    assert isinstance(stored, str)  # SQLite keeps text
    read = _READ(stored)
    assert read == value
    assert read.tzinfo is UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22 15:04:05", datetime(2026, 11, 22, 15, 4, 5, tzinfo=UTC)),
        ("2026-11-22T17:04:05.5+02:00", datetime(2026, 11, 22, 15, 4, 5, 500000, tzinfo=UTC)),
        (None, None),
    ],
)
def test_text_written_by_others_reads_as_utc(text: str | None, expected: datetime | None) -> None:
    """CURRENT_TIMESTAMP's spelling, and text that carries its own offset (a hand-written
    UPDATE): the same instant as the generic ``process_result_value`` reads it."""
    read = _READ(text)
    assert read == expected == UTCDateTime().process_result_value(text, SQLITE_DIALECT)
    assert read is None or read.tzinfo is UTC


_OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.one_of(st.none(), st.just(UTC), _OFFSETS),
)
def test_a_timestamp_is_stored_as_sqlalchemys_own_sqlite_text(
    naive: datetime, zone: timezone | None
) -> None:
    """The bind processor spells what ``process_bind_param`` and SQLAlchemy's SQLite
    ``DATETIME`` spelled before it (rows written by either read the same, sort the same)."""
    value = naive if zone is None else naive.replace(tzinfo=zone)
    sqlalchemys = DateTime().dialect_impl(SQLITE_DIALECT).bind_processor(SQLITE_DIALECT)
    assert sqlalchemys is not None
    expected = sqlalchemys(UTCDateTime().process_bind_param(value, SQLITE_DIALECT))
    assert _WRITE is not None and _WRITE(value) == expected
    assert _WRITE(None) is None
