"""``storage.models``: the timestamp type reads back what it stored, in UTC, on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

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
