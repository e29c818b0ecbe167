"""The input rules every request field follows (pure functions), each also spelled as a regular
expression for the OpenAPI document, so what the server accepts and what the schema allows are
the same set (tests/domain/test_validation.py holds each pair to that).

Each check raises ``ValueError`` with a message a person can act on, naming the field.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import phonenumbers
from phonenumbers import PhoneMetadata
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, region_code_for_country_code

from hookline.domain import _tables

MAX_TAGS = 50
MAX_TAG_LENGTH = 64
MAX_EMAIL_LENGTH = 254
E164_HINT = "must be E.164, e.g. +15551234567"

# -- characters ---------------------------------------------------------------------------------

# C0 controls other than tab, line feed and carriage return: NUL cannot be stored by PostgreSQL,
# and none of them belongs in a name, a note or a URL.
_FORBIDDEN_CONTROLS = [c for c in range(0x20) if chr(c) not in "\t\n\r"]
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
# Characters that render as nothing on their own: fillers that fonts draw blank.
_BLANK_FILLERS = (0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0)
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
# Planes that hold characters of those categories (outside: unassigned or private use).
_SCANNED = (range(0, 0x30000), range(0xE0000, 0xE1000))


def _scan_invisible() -> frozenset[int]:
    found = {
        code
        for plane in _SCANNED
        for code in plane
        if unicodedata.category(chr(code)) in _INVISIBLE_CATEGORIES
    }
    return frozenset(found | set(_scan_spaces()) | set(_BLANK_FILLERS))


def _scan_spaces() -> list[int]:
    return [code for plane in _SCANNED for code in plane if chr(code).isspace()]


def _codes(ranges: Iterable[tuple[int, int]]) -> list[int]:
    return [code for low, high in ranges for code in range(low, high + 1)]


# The scans take ~90 ms, at every start of every process: the stored ranges stand in for them
# on the Unicode version they were computed from (domain/_tables.py).
_STORED_UNICODE = unicodedata.unidata_version == _tables.UNICODE_VERSION
_INVISIBLE = frozenset(_codes(_tables.INVISIBLE)) if _STORED_UNICODE else _scan_invisible()
_SPACE_CODES = _codes(_tables.SPACES) if _STORED_UNICODE else _scan_spaces()


def _ranges(codes: Iterable[int]) -> Iterator[tuple[int, int]]:
    ordered = sorted(codes)
    start = previous = ordered[0]
    for code in ordered[1:]:
        if code != previous + 1:
            yield start, previous
            start = code
        previous = code
    yield start, previous


def _escape(code: int) -> str:
    # \uXXXX reads the same in ECMA-262, Python and Rust regexes; astral characters go literally
    # (each engine spells their escape differently).
    return f"\\u{code:04X}" if code <= 0xFFFF else chr(code)


def _char_class(codes: Iterable[int], *, negated: bool = False) -> str:
    parts = [
        _escape(low) if low == high else f"{_escape(low)}-{_escape(high)}"
        for low, high in _ranges(c for c in codes if not 0xD800 <= c <= 0xDFFF)
    ]
    return f"[{'^' if negated else ''}{''.join(parts)}]"


_NOT_CONTROL = _char_class(_FORBIDDEN_CONTROLS, negated=True)
_VISIBLE = _char_class(_INVISIBLE, negated=True)
_SPACE = _char_class(code for code in _SPACE_CODES if code not in _FORBIDDEN_CONTROLS)

#: Text with something other than white space in it.
NOT_BLANK_PATTERN = f"^[\\s\\S]*{_char_class(_SPACE_CODES, negated=True)}[\\s\\S]*$"
#: Any text without forbidden control characters.
TEXT_PATTERN = f"^{_NOT_CONTROL}*$"
#: Text with at least one visible character (a required name).
NAME_PATTERN = f"^{_NOT_CONTROL}*{_VISIBLE}{_NOT_CONTROL}*$"
#: Blank (stored as null) or a name.
OPTIONAL_NAME_PATTERN = f"^(?:{_SPACE}*|{_NOT_CONTROL}*{_VISIBLE}{_NOT_CONTROL}*)$"


def control_character_in(value: Any, path: str) -> str | None:
    """The path (``metadata.a[2]``) of the first string in ``value`` holding a forbidden control
    character, keys of objects included; None when there is none."""
    if isinstance(value, str):
        return path if _FORBIDDEN.search(value) else None
    return _first_leaf(value, path, _has_control_character)


def non_finite_number_in(value: Any, path: str) -> str | None:
    """The path of the first NaN or infinity in ``value`` (JSON has neither: a body's ``NaN``
    or ``1e400`` would be stored as ``null``); None when there is none."""
    return _first_leaf(value, path, _is_non_finite)


def _has_control_character(value: Any) -> bool:
    return isinstance(value, str) and _FORBIDDEN.search(value) is not None


def _is_non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _first_leaf(value: Any, path: str, bad: Callable[[Any], bool]) -> str | None:
    """The path of the first leaf or object key in ``value`` that is ``bad``, or None."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_leaf(item, f"{path}[{index}]", bad)
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = (path if bad(key) else None) or _first_leaf(item, f"{path}.{key}", bad)
            if found is not None:
                return found
    elif bad(value):
        return path
    return None


def refuse_unstorable(value: Any, field: str) -> Any:
    """Nothing in a body that JSON or the databases cannot hold: no C0 control character but
    tab, CR and LF in any string or key, no NaN or infinity in any number."""
    found = control_character_in(value, field)
    if found is not None:
        raise ValueError(
            f"{found} must not contain control characters (only tab, CR and LF are allowed)"
        )
    found = None if isinstance(value, str) else non_finite_number_in(value, field)
    if found is not None:
        raise ValueError(f"{found} must be a finite number (JSON has no NaN or Infinity)")
    return value


def is_visible(char: str) -> bool:
    return ord(char) not in _INVISIBLE


def text(value: str, field: str, *, max_length: int) -> str:
    """Free text (notes): trimmed; at most ``max_length`` characters as sent."""
    if len(value) > max_length:
        raise ValueError(f"{field} must be at most {max_length} characters")
    return value.strip()


def name(value: str, field: str, *, max_length: int, required: bool) -> str:
    """A name: trimmed; blank only when optional (stored as null); otherwise it must show at
    least one visible character (a name of zero-width or format characters alone is refused)."""
    trimmed = text(value, field, max_length=max_length)
    if not trimmed:
        if required:
            raise ValueError(f"{field} must not be empty")
        return trimmed
    if not any(map(is_visible, trimmed)):
        raise ValueError(f"{field} must contain a visible character")
    return trimmed


# -- phone numbers ------------------------------------------------------------------------------


def _possible_lengths() -> dict[int, list[int]]:
    """Country code → the national-number lengths libphonenumber calls possible there (every
    country's metadata loaded: ~80 ms, so the stored table stands in on its version)."""
    if phonenumbers.__version__ == _tables.PHONENUMBERS_VERSION:
        return {code: list(lengths) for code, lengths in _tables.PHONE_LENGTHS.items()}
    return _read_possible_lengths()


def _read_possible_lengths() -> dict[int, list[int]]:
    lengths: dict[int, list[int]] = {}
    for code in sorted(COUNTRY_CODE_TO_REGION_CODE):
        region = region_code_for_country_code(code)
        metadata = (
            PhoneMetadata.metadata_for_nongeo_region(code)
            if region == "001"
            else PhoneMetadata.metadata_for_region(region)
        )
        if metadata is None:
            continue
        general = metadata.general_desc
        if general is None:
            continue
        found = set(general.possible_length or ()) | set(general.possible_length_local_only or ())
        lengths[code] = sorted(n for n in found if n > 0)
    return lengths


# A digit may follow spaces, dots, dashes or parentheses: "+1 (415) 555-2671".
_SEPARATORS = "[ ().-]*"
_DIGIT = f"{_SEPARATORS}[0-9]"


def _national_number(lengths: tuple[int, ...]) -> str:
    counts = [
        f"{{{low}}}" if low == high else f"{{{low},{high}}}" for low, high in _ranges(lengths)
    ]
    return "|".join(f"(?:{_DIGIT}){count}" for count in counts)


def _phone_alternatives() -> Iterator[str]:
    """One alternative per set of possible lengths, naming every country code that has it (the
    codes are prefix-free, so grouping them keeps the meaning and keeps the pattern short
    enough for generators to draw from quickly)."""
    codes_by_lengths: dict[tuple[int, ...], list[str]] = {}
    for code, possible in _possible_lengths().items():
        if possible:
            codes_by_lengths.setdefault(tuple(possible), []).append(str(code))
    for lengths, codes in codes_by_lengths.items():
        yield f"(?:{'|'.join(codes)})(?:{_national_number(lengths)})"


#: E.164: "+", a country code, then a national number of a length possible in that country.
PHONE_PATTERN = f"^\\+{_SEPARATORS}(?:{'|'.join(_phone_alternatives())}){_SEPARATORS}$"
_PHONE = re.compile(PHONE_PATTERN)


def normalize_phone(value: str, field: str = "phone_number") -> str:
    """``+`` and digits: an E.164 number, separators dropped, validated as a possible number."""
    if not value.startswith("+"):
        raise ValueError(f"{field} {E164_HINT}")
    if not _PHONE.fullmatch(value):
        raise ValueError(f"{field} is not a possible phone number ({E164_HINT[5:]})")
    return "+" + "".join(char for char in value if char.isdigit())


# -- e-mail -------------------------------------------------------------------------------------

_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_TOP_LABEL = "[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#: A dot-atom local part, "@", a domain of at least two labels (RFC 5321, ASCII); the spaces
#: around it are trimmed.
EMAIL_PATTERN = f"^{_SPACE}*{_ATOM}(?:\\.{_ATOM})*@(?:{_LABEL}\\.)+{_TOP_LABEL}{_SPACE}*$"
_EMAIL = re.compile(EMAIL_PATTERN)


def normalize_email(value: str, field: str = "email") -> str:
    """The local part kept, the domain lowercased."""
    candidate = value.strip()
    if len(value) > MAX_EMAIL_LENGTH:
        raise ValueError(f"{field} must be at most {MAX_EMAIL_LENGTH} characters")
    if not _EMAIL.fullmatch(value):
        raise ValueError(f"{field} is not a valid email address (e.g. ada@example.com)")
    local, _, domain = candidate.rpartition("@")
    return f"{local}@{domain.lower()}"


# -- tags ---------------------------------------------------------------------------------------


def normalize_tags(values: Iterable[str], field: str = "tags") -> list[str]:
    """Trimmed, duplicates dropped (first occurrence kept), order kept."""
    seen: dict[str, None] = {}
    for raw in values:
        if len(raw) > MAX_TAG_LENGTH or not raw.strip():
            raise ValueError(f"each of {field} must be 1 to {MAX_TAG_LENGTH} characters")
        seen.setdefault(name(raw, f"each of {field}", max_length=MAX_TAG_LENGTH, required=True))
    if len(seen) > MAX_TAGS:
        raise ValueError(f"{field} may hold at most {MAX_TAGS} tags")
    return list(seen)


# -- URLs ---------------------------------------------------------------------------------------

_PCT = "%[0-9A-Fa-f]{2}"
_PCHAR = f"(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|{_PCT})"
_HOST_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_H16 = "[0-9A-Fa-f]{1,4}"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_LS32 = f"(?:{_H16}:{_H16}|{_OCTET}(?:\\.{_OCTET}){{3}})"
# RFC 3986's IPv6address, alternative by alternative.
_IPV6 = "|".join(
    [
        f"(?:{_H16}:){{6}}{_LS32}",
        f"::(?:{_H16}:){{5}}{_LS32}",
        f"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
        f"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
        f"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
        f"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
        f"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
        f"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
        f"(?:(?:{_H16}:){{0,6}}{_H16})?::",
    ]
)
_PORT = "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"
#: An absolute http(s) URL (RFC 3986) whose host is a DNS name, an IPv4 or a bracketed IPv6
#: address; the spaces around it are trimmed.
URL_PATTERN = (
    f"^{_SPACE}*[Hh][Tt][Tt][Pp][Ss]?://"
    f"(?:(?:[A-Za-z0-9._~!$&'()*+,;=:-]|{_PCT})*@)?"
    f"(?:{_HOST_LABEL}(?:\\.{_HOST_LABEL})*\\.?|\\[(?:{_IPV6})\\])"
    f"(?::{_PORT})?"
    f"(?:/{_PCHAR}*)*"
    f"(?:\\?(?:{_PCHAR}|[/?])*)?"
    f"(?:#(?:{_PCHAR}|[/?])*)?{_SPACE}*$"
)
_URL = re.compile(URL_PATTERN)
MAX_URL_LENGTH = 2048


def url_syntax(value: str, field: str = "url") -> str:
    if len(value) > MAX_URL_LENGTH:
        raise ValueError(f"{field} must be at most {MAX_URL_LENGTH} characters")
    if not _URL.fullmatch(value):
        raise ValueError(
            f"{field} must be an absolute http or https URL with a host (RFC 3986: no spaces, "
            "quotes or <>), e.g. https://example.com/hooks"
        )
    return value.strip()


# -- timestamps ---------------------------------------------------------------------------------

_TIME = "T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,6})?"
_ANY_OFFSET = "(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
#: The zones a timestamp may carry.
TIMESTAMP_OFFSET = re.compile(_ANY_OFFSET)
#: The years a timestamp may fall in, as written and once converted to UTC: from the Unix epoch
#: (no time is negative in seconds since 1970, the encoding every client and id shares) to a
#: year short of the largest time Python holds, so a time plus any duration the API handles
#: (a window, a call's length, a retention period) stays representable.
FIRST_YEAR = 1970
LAST_YEAR = 9998
EARLIEST = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC)
END_OF_TIME = datetime(LAST_YEAR + 1, 1, 1, tzinfo=UTC)
"""Timestamps are in [EARLIEST, END_OF_TIME)."""


def _digits_between(low: str, high: str) -> str:
    """A pattern matching the numbers of ``len(low)`` decimal digits in [low, high]."""
    if low == high:
        return low
    rest = len(low) - 1
    if low[1:] == "0" * rest and high[1:] == "9" * rest:
        return _digit_class(low[0], high[0]) + _any_digits(rest)
    if low[0] == high[0]:
        return low[0] + _digits_between(low[1:], high[1:])
    parts = [low[0] + _digits_between(low[1:], "9" * rest)]
    if int(high[0]) - int(low[0]) > 1:
        parts.append(_digit_class(chr(ord(low[0]) + 1), chr(ord(high[0]) - 1)) + _any_digits(rest))
    parts.append(high[0] + _digits_between("0" * rest, high[1:]))
    return f"(?:{'|'.join(parts)})"


def _digit_class(low: str, high: str) -> str:
    return low if low == high else f"[{low}-{high}]"


def _any_digits(count: int) -> str:
    return "[0-9]" * count if count < 2 else f"[0-9]{{{count}}}"


_INNER_YEARS = _digits_between(f"{FIRST_YEAR + 1:04d}", f"{LAST_YEAR - 1:04d}")
_BEHIND_UTC = "-(?:[01][0-9]|2[0-3]):[0-5][0-9]"
_AHEAD_OF_UTC = "[+](?:[01][0-9]|2[0-3]):[0-5][0-9]"
#: ISO 8601 with a zone, in years FIRST_YEAR..LAST_YEAR as written and in UTC: on the first day
#: the zone may not be ahead of UTC, on the last day not behind it (the instant would fall
#: outside those years).
TIMESTAMP_PATTERN = (
    "^(?:"
    f"{_INNER_YEARS}-[0-9]{{2}}-[0-9]{{2}}{_TIME}{_ANY_OFFSET}"
    f"|{FIRST_YEAR:04d}-(?:0[2-9]-[0-9]{{2}}|1[0-2]-[0-9]{{2}}|01-0[2-9]|01-[1-3][0-9])"
    f"{_TIME}{_ANY_OFFSET}"
    f"|{LAST_YEAR:04d}-(?:0[0-9]-[0-9]{{2}}|1[01]-[0-9]{{2}}|12-[0-2][0-9]|12-30)"
    f"{_TIME}{_ANY_OFFSET}"
    f"|{FIRST_YEAR:04d}-01-01{_TIME}(?:Z|[+]00:00|{_BEHIND_UTC})"
    f"|{LAST_YEAR:04d}-12-31{_TIME}(?:Z|-00:00|{_AHEAD_OF_UTC})"
    ")$"
)
_TIMESTAMP = re.compile(TIMESTAMP_PATTERN)


def timestamp(value: Any, field: str) -> datetime:
    """An aware datetime in UTC from an ISO 8601 string with a zone (``2026-11-22T15:04:05Z``)."""
    if not isinstance(value, str):
        raise ValueError(f"{field} must be an ISO 8601 datetime string with a timezone")
    if not _TIMESTAMP.fullmatch(value):
        raise ValueError(
            f"{field} must be an ISO 8601 datetime with a timezone, e.g. {_EXAMPLE}, "
            f"in years {FIRST_YEAR}..{LAST_YEAR} once converted to UTC"
        )
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError(f"{field} is not a real datetime, e.g. {_EXAMPLE}") from None
    if not EARLIEST <= moment < END_OF_TIME:  # the pattern's rule, which the arithmetic needs
        raise ValueError(f"{field} must fall in years {FIRST_YEAR}..{LAST_YEAR} in UTC")
    return moment


_EXAMPLE = "2026-11-22T15:04:05Z"
