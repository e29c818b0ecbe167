"""``storage.models``: the timestamp type reads back what it stored, in UTC, on SQLite, and
``SpelledTime`` reads it as the contract spells it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import DateTime

from hookline.storage.connector import POSTGRES_DIALECT, SQLITE_DIALECT
from hookline.storage.models import SpelledTime, UTCDateTime
from hookline.timeutil import iso

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

# Any datetime the API could be given: naive, in UTC, or at any offset.
_ANY_TIME = st.builds(
    lambda naive, zone: naive if zone is None else naive.replace(tzinfo=zone),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.one_of(st.none(), st.just(UTC), _OFFSETS),
)


@given(_ANY_TIME)
def test_a_timestamp_is_stored_as_sqlalchemys_own_sqlite_text(value: datetime) -> None:
    """The bind processor spells what ``process_bind_param`` and SQLAlchemy's SQLite
    ``DATETIME`` spelled before it (rows written by either read the same, sort the same)."""
    sqlalchemys = DateTime().dialect_impl(SQLITE_DIALECT).bind_processor(SQLITE_DIALECT)
    assert sqlalchemys is not None
    expected = sqlalchemys(UTCDateTime().process_bind_param(value, SQLITE_DIALECT))
    assert _WRITE is not None and _WRITE(value) == expected
    assert _WRITE(None) is None


_SPELL_OR_NONE = SpelledTime().dialect_impl(SQLITE_DIALECT).result_processor(SQLITE_DIALECT, None)
assert _SPELL_OR_NONE is not None
_SPELL = _SPELL_OR_NONE


@given(_ANY_TIME)
def test_a_stored_timestamp_is_read_spelled_as_the_contract_spells_it(value: datetime) -> None:
    """``SpelledTime`` slices the stored text: the same text as reading the datetime
    (``UTCDateTime``) and spelling it with ``timeutil.iso``, milliseconds truncated."""
    assert _WRITE is not None
    stored = _WRITE(value)
    assert _SPELL(stored) == iso(_READ(stored)) == iso(value)


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-22 15:04:05",  # CURRENT_TIMESTAMP's
        "2026-11-22T17:04:05.5+02:00",
        "2026-11-22 17:04:05.123+02",  # 26 characters, with an offset
        "2026-11-22 15:04:05.1-0530",  # 26 characters too
        "2026-11-22T15:04:05.123456",  # the other separator
        "2026-11-22 15:04:05.123456+00:00",
        None,
    ],
)
def test_text_written_by_others_is_spelled_as_its_instant_in_utc(text: str | None) -> None:
    assert _SPELL(text) == iso(_READ(text))


def test_a_timestamp_read_from_postgresql_is_spelled_by_iso() -> None:
    spell = SpelledTime().dialect_impl(POSTGRES_DIALECT).result_processor(POSTGRES_DIALECT, None)
    assert spell is not None
    at_two = datetime(2026, 11, 22, 17, 4, 5, 123999, tzinfo=timezone(timedelta(hours=2)))
    assert spell(at_two) == "2026-11-22T15:04:05.123Z"
    assert spell(None) is None
