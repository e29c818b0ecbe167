"""API key format: checksum, hashing, scopes (pure logic)."""

from __future__ import annotations

import hashlib
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookline.domain import keys


def test_generated_keys_are_well_formed_and_unique() -> None:
    generated = {keys.generate_key() for _ in range(200)}
    assert len(generated) == 200
    for key in generated:
        assert key.startswith("hl_live_") and len(key) == keys.KEY_LENGTH
        assert keys.is_well_formed(key)


@given(st.integers(min_value=len("hl_live_"), max_value=keys.KEY_LENGTH - 1), st.characters())
def test_a_single_typo_breaks_the_checksum(position: int, replacement: str) -> None:
    key = keys.generate_key()
    typo = key[:position] + replacement + key[position + 1 :]
    if typo != key:
        assert not keys.is_well_formed(typo)


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


# Keys issued before the checksum was spelled from a table of digit pairs (the digit-by-digit
# spelling made them): they must stay well-formed, and each one typo away must not.
ISSUED = (
    "hl_live_000000000000000000000000000000002wjyrI",
    "hl_live_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz4W8LJS",
    "hl_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123451HTd0k",
)


@pytest.mark.parametrize("key", ISSUED)
def test_keys_issued_before_stay_well_formed(key: str) -> None:
    assert keys.is_well_formed(key)
    assert not keys.is_well_formed(key[:-1] + ("0" if key[-1] != "0" else "1"))


def _spelled_digit_by_digit(number: int) -> str:
    digits = ""
    for _ in range(6):
        number, digit = divmod(number, 62)
        digits = _BASE62[digit] + digits
    return digits


@given(st.text(st.sampled_from(_BASE62), min_size=32, max_size=32))
def test_the_checksum_is_the_crc32_in_six_base62_digits(random_part: str) -> None:
    expected = _spelled_digit_by_digit(zlib.crc32(random_part.encode()))
    assert keys.is_well_formed("hl_live_" + random_part + expected)
    for wrong in {expected[:5] + c for c in "0Zz"} - {expected}:
        assert not keys.is_well_formed("hl_live_" + random_part + wrong)


@pytest.mark.parametrize("crc", [0, 1, 61, 62, 3843, 3844, 62**4 - 1, 62**4, 0xFFFF_FFFF])
def test_the_checksum_spells_the_edges_of_its_digits(
    crc: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zlib, "crc32", lambda _: crc)
    assert keys.is_well_formed("hl_live_" + "0" * 32 + _spelled_digit_by_digit(crc))


@given(
    st.sampled_from(["hl_live_", "hl_test_", "", "hl_live"]),
    st.text(st.sampled_from(_BASE62), min_size=36, max_size=40)
    | st.text(st.characters(), min_size=36, max_size=40),
    st.sampled_from(["", "\n", " ", "\x00"]),
)
def test_the_key_shape_is_the_prefix_and_38_base62_characters(
    prefix: str, body: str, tail: str
) -> None:
    key = prefix + body + tail
    expected = (
        key.startswith("hl_live_")
        and len(key) == keys.KEY_LENGTH
        and all(c in _BASE62 for c in key[len("hl_live_") :])
    )
    assert keys.has_key_shape(key) == expected


def test_only_a_sha256_is_stored() -> None:
    key = keys.generate_key()
    assert keys.hash_key(key) == hashlib.sha256(key.encode()).hexdigest()


def test_scopes_default_to_all_and_refuse_unknown() -> None:
    assert keys.normalize_scopes(None) == list(keys.SCOPES)
    assert keys.normalize_scopes(["webhooks:read", "contacts:read"]) == [
        "contacts:read",
        "webhooks:read",
    ]
    with pytest.raises(ValueError, match="unknown scope"):
        keys.normalize_scopes(["contacts:delete"])
