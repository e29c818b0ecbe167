"""Standard Webhooks signing, checked against the reference ``standardwebhooks`` verifier."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from standardwebhooks import Webhook, WebhookVerificationError

from hookline import __version__
from hookline.delivery.signing import (
    build_headers,
    event_body,
    hmac_sha256,
    live_secrets,
    new_signing_key,
    public_key_of,
    secret_key_bytes,
    sign,
)
from tests.delivery.helpers import CONTACT, new_secret
from tests.support.identity import verify_v1a

# From the Standard Webhooks specification's examples.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TS = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_sign_matches_the_specification_example() -> None:
    assert sign(SPEC_SECRET, SPEC_ID, SPEC_TS, SPEC_BODY) == SPEC_SIGNATURE


def test_secret_prefix_and_padding_are_optional() -> None:
    raw = secret_key_bytes(SPEC_SECRET)
    assert secret_key_bytes(SPEC_SECRET.removeprefix("whsec_")) == raw
    with pytest.raises(ValueError):
        secret_key_bytes("whsec_")


@given(key=st.binary(min_size=1, max_size=200), message=st.binary(max_size=2000))
@example(key=b"k" * 64, message=b"m").via("the block's length")
@example(key=bytes(range(65)), message=b"m").via("a key hashed first")
def test_the_keyed_hmac_copy_gives_hmacs_own_digest(key: bytes, message: bytes) -> None:
    # Keys shorter than, as long as and longer than SHA-256's 64-byte block (hashed first),
    # each signed twice: a second signature must not see the first one's message (the cached
    # keyed object is copied, never fed).
    secret = "whsec_" + base64.b64encode(key).decode()
    expected = hmac.digest(key, message, hashlib.sha256)
    assert hmac_sha256(secret, message) == expected
    assert hmac_sha256(secret, message) == expected
    assert hmac_sha256(secret, b"other") == hmac.digest(key, b"other", hashlib.sha256)


@given(
    msg_id=st.text(st.characters(codec="ascii", categories=("L", "N", "P")), min_size=1),
    body=st.dictionaries(st.text(), st.one_of(st.none(), st.integers(), st.text()), max_size=5),
)
def test_any_signed_body_verifies(msg_id: str, body: dict[str, object]) -> None:
    secret = new_secret()
    data = json.dumps(body).encode()
    headers = build_headers(msg_id.strip() or "x", int(time.time()), data, [secret])
    assert Webhook(secret).verify(data, headers) == body


def test_headers_carry_id_timestamp_type_and_user_agent() -> None:
    secret = new_secret()
    headers = build_headers("evt_1", 1700000000, b"{}", [secret])
    assert headers["webhook-id"] == "evt_1"
    assert headers["webhook-timestamp"] == "1700000000"
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"] == f"hookline/{__version__}"
    assert headers["webhook-signature"].startswith("v1,")


def test_rotation_signs_with_both_secrets_and_each_verifies() -> None:
    old, new = new_secret(), new_secret()
    body = b'{"id":"evt_1"}'
    headers = build_headers("evt_1", int(time.time()), body, [new, old])
    assert len(headers["webhook-signature"].split(" ")) == 2
    Webhook(new).verify(body, headers)
    Webhook(old).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(body, headers)


def test_an_ed25519_key_signs_v1a_that_the_public_key_verifies() -> None:
    key = new_signing_key()
    public_key = public_key_of(key)
    assert key.startswith("whsk_") and public_key.startswith("whpk_")
    assert len(base64.b64decode(public_key.removeprefix("whpk_"))) == 32
    body = b'{"id":"evt_1"}'
    headers = build_headers("evt_1", int(time.time()), body, [key])
    assert headers["webhook-signature"].startswith("v1a,")
    assert verify_v1a(public_key, body, headers)
    assert not verify_v1a(public_key, b'{"id":"evt_2"}', headers)
    assert not verify_v1a(public_key_of(new_signing_key()), body, headers)
    tampered_id = {**headers, "webhook-id": "evt_2"}
    assert not verify_v1a(public_key, body, tampered_id)


def test_a_switch_of_scheme_signs_v1_and_v1a_and_each_verifier_accepts() -> None:
    """During the overlap after hmac -> ed25519, a receiver still on the HMAC secret
    (standardwebhooks skips the ``v1a`` entry) and one on the public key both accept."""
    key, secret = new_signing_key(), new_secret()
    body = b'{"id":"evt_1"}'
    headers = build_headers("evt_1", int(time.time()), body, [key, secret])
    assert [s.split(",")[0] for s in headers["webhook-signature"].split(" ")] == ["v1a", "v1"]
    Webhook(secret).verify(body, headers)
    assert verify_v1a(public_key_of(key), body, headers)
    old_key = new_signing_key()  # a rotation of the Ed25519 key: both keys verify
    rotated = build_headers("evt_1", int(time.time()), body, [key, old_key])
    assert verify_v1a(public_key_of(key), body, rotated)
    assert verify_v1a(public_key_of(old_key), body, rotated)


def test_tampered_body_fails_verification() -> None:
    secret = new_secret()
    headers = build_headers("evt_1", int(time.time()), b'{"a":1}', [secret])
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(b'{"a":2}', headers)


def test_previous_secret_is_live_only_until_it_expires() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert live_secrets("a", "b", now + timedelta(seconds=1), now) == ["a", "b"]
    assert live_secrets("a", "b", now, now) == ["a"]
    assert live_secrets("a", "b", None, now) == ["a"]
    assert live_secrets("a", None, now + timedelta(hours=1), now) == ["a"]


def test_body_has_the_envelope_and_the_object() -> None:
    created = datetime(2026, 11, 22, 15, 4, 5, 123000, tzinfo=UTC)
    body = json.loads(event_body("evt_1", "contact.created", created, CONTACT, None))
    assert body == {
        "id": "evt_1",
        "type": "contact.created",
        "timestamp": "2026-11-22T15:04:05.123Z",
        "data": CONTACT,
    }


def test_contact_updated_body_has_previous_attributes() -> None:
    created = datetime(2026, 11, 22, tzinfo=UTC)
    body = json.loads(
        event_body("evt_1", "contact.updated", created, CONTACT, {"first_name": "Ad"})
    )
    assert body["previous_attributes"] == {"first_name": "Ad"}
    # Other kinds never carry the field, whatever is stored.
    other = json.loads(event_body("evt_2", "contact.deleted", created, CONTACT, {"x": 1}))
    assert "previous_attributes" not in other


_JSON_TEXT = st.text(st.characters(codec="utf-8"))  # no lone surrogates: orjson refuses them
_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what orjson encodes
    | st.floats()
    | _JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_JSON_TEXT, inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=25)  # under a second; test_manager.TRICKY_DATA has the known edges
@given(
    data=st.dictionaries(_JSON_TEXT, _JSON_VALUES, max_size=6),
    previous=st.dictionaries(_JSON_TEXT, _JSON_VALUES, max_size=3),
)
def test_stored_json_makes_the_body_of_the_decoded_data(
    data: dict[str, object], previous: dict[str, object]
) -> None:
    """The worker's claims on SQLite carry the event's JSON as stored (orjson's text, as an
    ``orjson.Fragment``): the body must be the bytes of decoding that text and encoding it
    again, for any data orjson stores."""
    created = datetime(2026, 11, 27, 20, 15, 1, 123000, tzinfo=UTC)
    stored_data, stored_previous = orjson.dumps(data).decode(), orjson.dumps(previous).decode()
    for event_type in ("contact.created", "contact.updated"):
        spliced = event_body(
            "evt_1",
            event_type,
            created,
            orjson.Fragment(stored_data),
            orjson.Fragment(stored_previous),
        )
        decoded = event_body(
            "evt_1", event_type, created, orjson.loads(stored_data), orjson.loads(stored_previous)
        )
        assert spliced == decoded
