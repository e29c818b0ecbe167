"""Properties of phone, tag and email normalisation (pure functions)."""

from __future__ import annotations

import phonenumbers
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
