"""API key format: checksum, hashing, scopes (pure logic)."""

from __future__ import annotations

import hashlib

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
