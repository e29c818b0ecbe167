"""UTC time and the contract's timestamp spelling (``2026-11-22T15:04:05.123Z``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hookline.caches import remember


def utcnow() -> datetime:
    """Now, in UTC, truncated to the millisecond (as ``to_millis``).

    Less the microseconds past the millisecond, from a table: ``to_millis``'s ``replace``
    with a keyword is most of its cost, and this runs several times a request."""
    now = _clock(UTC)
    return now - _MICROS[now.microsecond % 1000]


_clock = datetime.now  # a seam: tests set the clock
_MICROS = tuple(timedelta(microseconds=micros) for micros in range(1000))


def to_millis(value: datetime) -> datetime:
    """Millisecond precision: what we store is exactly what we print, on SQLite and PostgreSQL."""
    return value.replace(microsecond=(value.microsecond // 1000) * 1000)


def iso(value: datetime | None) -> str | None:
    """The contract's spelling, in UTC; a naive value is taken to be UTC already."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    elif value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    # It runs for every timestamp of every response, so it is built from pieces spelled once:
    # the day ("2026-11-22T", per calendar day) and table look-ups for the rest (faster than
    # isoformat or strftime). Milliseconds are truncated, as stored.
    day = _DAYS.get(value.toordinal())
    if day is None:
        day = _spell_day(value)
    return (
        f"{day}{_TWO_DIGITS[value.hour]}:{_TWO_DIGITS[value.minute]}:"
        f"{_TWO_DIGITS[value.second]}{_MILLIS_Z[value.microsecond // 1000]}"
    )


_TWO_DIGITS = tuple(f"{number:02d}" for number in range(60))
_MILLIS_Z = tuple(f".{millis:03d}Z" for millis in range(1000))
_DAYS: dict[int, str] = {}  # date ordinal -> "2026-11-22T"
_MAX_DAYS = 4096  # ~11 years of distinct days before the table starts again


def _spell_day(value: datetime) -> str:
    return remember(_DAYS, value.toordinal(), value.date().isoformat() + "T", limit=_MAX_DAYS)


def parse_iso(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
