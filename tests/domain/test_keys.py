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
