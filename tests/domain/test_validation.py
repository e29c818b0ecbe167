"""Properties of phone, tag and email normalisation (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import NoReturn

import phonenumbers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yarl import URL

from hookline.domain import validation
from hookline.domain.validation import (
    is_visible,
    normalize_email,
    normalize_phone,
    normalize_tags,
)

REGIONS = sorted(phonenumbers.SUPPORTED_REGIONS)


@st.composite
def example_numbers(draw: st.DrawFn) -> phonenumbers.PhoneNumber:
    region = draw(st.sampled_from(REGIONS))
    number = phonenumbers.example_number(region)
    if number is None:
        number = phonenumbers.example_number("US")
    assert number is not None
    return number


@given(example_numbers(), st.sampled_from(["E164", "INTERNATIONAL"]))
def test_any_spelling_of_a_valid_number_normalises_to_its_e164(
    number: phonenumbers.PhoneNumber, style: str
) -> None:
    e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    spelled = phonenumbers.format_number(number, getattr(phonenumbers.PhoneNumberFormat, style))
    assert normalize_phone(spelled) == e164
    assert normalize_phone(e164) == e164  # idempotent


@given(st.text(alphabet="0123456789 -()", min_size=1, max_size=20))
def test_numbers_without_plus_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"E\.164, e\.g\. \+15551234567"):
        normalize_phone(text)


@given(
    st.lists(
        st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=60).filter(
            lambda t: t.strip() and any(map(is_visible, t))
        ),
        max_size=50,
    )
)
def test_tags_are_trimmed_deduplicated_and_keep_order(tags: list[str]) -> None:
    result = normalize_tags(tags)
    expected: list[str] = []
    for tag in tags:
        if tag.strip() not in expected:
            expected.append(tag.strip())
    assert result == expected
    assert normalize_tags(result) == result


def test_tags_limits() -> None:
    with pytest.raises(ValueError, match="at most 50"):
        normalize_tags([f"t{i}" for i in range(51)])
    with pytest.raises(ValueError, match="1 to 64"):
        normalize_tags(["x" * 65])
    assert normalize_tags([f"t{i % 50}" for i in range(200)]) == [f"t{i}" for i in range(50)]


@given(
    st.from_regex(r"[a-z0-9]{1,20}(\.[a-z0-9]{1,10})?", fullmatch=True),
    st.from_regex(r"[a-z]{2,20}\.(com|org|io)", fullmatch=True),
)
def test_valid_emails_keep_their_local_part_and_lowercase_the_domain(
    local: str, domain: str
) -> None:
    assert normalize_email(f"{local}@{domain.upper()}") == f"{local}@{domain}"


@pytest.mark.parametrize(
    "email", ["plain", "a@", "@b.com", "a b@c.com", "a@b", "x" * 250 + "@e.com"]
)
def test_bad_emails_are_refused(email: str) -> None:
    with pytest.raises(ValueError, match="email"):
        normalize_email(email)


# -- each rule and its OpenAPI pattern accept the same strings ----------------------------------


def _accepts(check: Callable[[str], object], value: str) -> bool:
    try:
        check(value)
    except ValueError:
        return False
    return True


RULES: list[tuple[str, str, Callable[[str], object]]] = [
    ("text", validation.TEXT_PATTERN, lambda v: validation.refuse_unstorable(v, "f")),
    (
        "name",
        validation.NAME_PATTERN,
        lambda v: _no_controls(v) and validation.name(v, "f", max_length=10_000, required=True),
    ),
    (
        "optional name",
        validation.OPTIONAL_NAME_PATTERN,
        lambda v: _no_controls(v) and validation.name(v, "f", max_length=10_000, required=False),
    ),
    ("phone", validation.PHONE_PATTERN, validation.normalize_phone),
    ("email", validation.EMAIL_PATTERN, validation.normalize_email),
    ("url", validation.URL_PATTERN, validation.url_syntax),
    ("not blank", validation.NOT_BLANK_PATTERN, lambda v: v.strip() or _fail()),
]


def _fail() -> NoReturn:
    raise ValueError("blank")


def _no_controls(value: str) -> bool:
    """As every request field is checked (``RequestModel``), before its own rule."""
    validation.refuse_unstorable(value, "f")
    return True


@pytest.mark.parametrize(("rule", "pattern", "check"), RULES, ids=[r[0] for r in RULES])
def test_every_rule_accepts_exactly_what_its_pattern_matches(
    rule: str, pattern: str, check: Callable[[str], object]
) -> None:
    compiled = re.compile(pattern)
    matching = st.from_regex(compiled, fullmatch=True).filter(lambda v: len(v) < 2000)
    near = st.one_of(
        st.text(max_size=40),
        st.text(alphabet="+0123456789 ().-@.aZ:/[]%", max_size=30),
        st.builds(lambda a, b: a + b, matching, st.text(max_size=3)),
        st.builds(lambda a, b: a + b, st.text(max_size=3), matching),
    )

    # No example database: a replayed example of an interrupted run drew huge strings from the
    # regex strategies for minutes (the rules are pure, so nothing is lost). Derandomized: one
    # random draw from the e-mail pattern's strategy ran past the suite's 300 s timeout in CI
    # (generation, not the rule: the rule is bounded at 254 characters); the same examples
    # every run keep the property honest and the run short.
    @settings(
        max_examples=40,
        suppress_health_check=[HealthCheck.too_slow],
        deadline=None,
        database=None,
        derandomize=True,
    )
    @given(matching, near)
    def agree(valid: str, other: str) -> None:
        assert _accepts(check, valid), (rule, valid)
        assert _accepts(check, other) == bool(compiled.fullmatch(other)), (rule, other)

    agree()


# Local times within a day or two of the window's ends, in any zone.
_AROUND_THE_WINDOW = st.datetimes(
    datetime(validation.FIRST_YEAR - 1, 12, 30),
    datetime(validation.FIRST_YEAR, 1, 2),
    timezones=st.timezones(),
) | st.datetimes(
    datetime(validation.LAST_YEAR, 12, 30),
    datetime(validation.LAST_YEAR + 1, 1, 2),
    timezones=st.timezones(),
)


@given(
    st.datetimes(timezones=st.timezones())
    | st.datetimes(timezones=st.just(UTC))
    | _AROUND_THE_WINDOW
)
def test_a_timestamp_is_accepted_exactly_when_it_is_in_the_window(moment: datetime) -> None:
    """In years FIRST_YEAR..LAST_YEAR as written, and on the first day not ahead of UTC, on the
    last not behind it: the pattern and the validator agree on every spelling, and every
    accepted one is that instant, inside [EARLIEST, END_OF_TIME)."""
    spelled = moment.isoformat()
    offset = moment.utcoffset()
    assert offset is not None
    writable = bool(validation.TIMESTAMP_OFFSET.fullmatch(spelled[19:].lstrip(".0123456789")))
    first_day_ahead = moment.date() == date(validation.FIRST_YEAR, 1, 1) and offset > timedelta()
    last_day_behind = moment.date() == date(validation.LAST_YEAR, 12, 31) and offset < timedelta()
    in_the_window = (
        validation.FIRST_YEAR <= moment.year <= validation.LAST_YEAR
        and writable
        and not (first_day_ahead or last_day_behind)
    )
    matches = bool(re.fullmatch(validation.TIMESTAMP_PATTERN, spelled))
    assert _accepts(lambda v: validation.timestamp(v, "t"), spelled) == matches
    assert matches == in_the_window, spelled
    if matches:
        instant = validation.timestamp(spelled, "t")
        assert instant == moment.astimezone(UTC)
        assert validation.EARLIEST <= instant < validation.END_OF_TIME


def test_url_pattern_matches_are_urls_the_delivery_side_parses() -> None:
    for url in ["http://[::1]:8080/", "https://a.b.c:443/p?q=1#f", "HTTP://0/", "http://a@b/"]:
        assert validation.url_syntax(url) == url
        assert URL(url).raw_host


# -- stored tables ------------------------------------------------------------------------------


def test_the_tables_in_use_are_what_this_python_and_phonenumbers_compute() -> None:
    """Whether stored (domain/_tables.py, on their versions) or computed at import (on others),
    the characters and phone lengths the rules use are those of the running versions."""
    assert validation._INVISIBLE == validation._scan_invisible()
    assert validation._SPACE_CODES == validation._scan_spaces()
    assert validation._possible_lengths() == validation._read_possible_lengths()


# Imports validation in a fresh process and reports what it computed: the Unicode categories
# it looked up, and the countries whose phone metadata it loaded.
_WHAT_IMPORT_COMPUTES = """
import json, sys, unicodedata
looked_up = 0
category = unicodedata.category
def counting(char):
    global looked_up
    looked_up += 1
    return category(char)
unicodedata.category = counting
import hookline.domain.validation
regions = [m for m in sys.modules if m.startswith("phonenumbers.data.region_")]
print(json.dumps({"categories": looked_up, "regions": len(regions)}))
"""


def test_the_stored_tables_are_used_on_the_versions_they_were_computed_from() -> None:
    import json
    import subprocess
    import sys
    import unicodedata

    from hookline.domain import _tables

    assert validation._STORED_UNICODE == (unicodedata.unidata_version == _tables.UNICODE_VERSION)
    if phonenumbers.__version__ == _tables.PHONENUMBERS_VERSION:
        assert validation._possible_lengths() == {
            code: list(found) for code, found in _tables.PHONE_LENGTHS.items()
        }
    done = subprocess.run(
        [sys.executable, "-c", _WHAT_IMPORT_COMPUTES], capture_output=True, text=True, check=True
    )
    computed = json.loads(done.stdout)
    if validation._STORED_UNICODE:
        assert computed["categories"] == 0, "scanned Unicode although its table is stored"
    else:
        assert computed["categories"] > 100_000
    if phonenumbers.__version__ == _tables.PHONENUMBERS_VERSION:
        assert computed["regions"] == 0, "loaded every country's metadata despite the table"
    else:
        assert computed["regions"] > 100
