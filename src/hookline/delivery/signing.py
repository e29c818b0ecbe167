"""Standard Webhooks 1.0 signing: the body we POST and the headers that let a receiver trust it.

The body is serialized once per event and the same bytes go to every webhook and every attempt:
the signature covers the exact bytes sent, and re-encoding per attempt would be wasted work that
could also (with a different serializer) change the bytes a receiver already deduplicated.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from hookline import __version__
from hookline.delivery.header_rules import sendable
from hookline.timeutil import iso

SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)
# Standard Webhooks' asymmetric keys: base64 of the Ed25519 seed (signing key, never shown)
# and of the raw public key.
SIGNING_KEY_PREFIX = "whsk_"
PUBLIC_KEY_PREFIX = "whpk_"
USER_AGENT = f"hookline/{__version__}"
# Only contact.updated carries the changed fields' old values.
EVENTS_WITH_PREVIOUS_ATTRIBUTES = frozenset({"contact.updated"})


@functools.lru_cache(maxsize=1024)
def secret_key_bytes(secret: str) -> bytes:
    """The HMAC key inside ``whsec_<base64>`` (the prefix is optional, as in standardwebhooks).
    Cached: the worker signs every attempt with a handful of secrets (whose plaintext it keeps
    in memory anyway, ``worker._decrypt``)."""
    key = _b64decode(secret.removeprefix(SECRET_PREFIX))
    if not key:
        raise ValueError("webhook secret may not be empty")
    return key


@functools.lru_cache(maxsize=1024)
def _keyed_hmac(secret: str) -> hmac.HMAC:
    """An HMAC-SHA256 object keyed with the secret and fed nothing: a signature copies it.
    ``hmac.digest`` keys OpenSSL's HMAC context (hashing both pads) on every call; a copy of a
    keyed object skips that.
    The standard library's HMAC, not one built from two hash states, so the padding and the
    long-key rule stay the library's. Cached per secret like ``secret_key_bytes``; never fed,
    only copied."""
    return hmac.new(secret_key_bytes(secret), digestmod=hashlib.sha256)


def hmac_sha256(secret: str, message: bytes) -> bytes:
    """``hmac.digest(secret_key_bytes(secret), message, "sha256")``, from the keyed copy."""
    mac = _keyed_hmac(secret).copy()
    mac.update(message)
    return mac.digest()


def _b64decode(encoded: str) -> bytes:
    # Tolerate unpadded base64, as the reference libraries do.
    return base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)


def new_signing_key() -> str:
    """A fresh Ed25519 signing key, ``whsk_<base64 of the 32-byte seed>``."""
    seed = Ed25519PrivateKey.generate().private_bytes_raw()
    return SIGNING_KEY_PREFIX + base64.b64encode(seed).decode("ascii")


@functools.lru_cache(maxsize=1024)
def _ed25519_key(signing_key: str) -> Ed25519PrivateKey:
    """The private key of ``whsk_<seed>``; cached per key like ``_keyed_hmac``."""
    seed = _b64decode(signing_key.removeprefix(SIGNING_KEY_PREFIX))
    return Ed25519PrivateKey.from_private_bytes(seed)


def public_key_of(signing_key: str) -> str:
    """``whpk_<base64 of the raw public key>`` of a ``whsk_`` signing key."""
    raw = _ed25519_key(signing_key).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return PUBLIC_KEY_PREFIX + base64.b64encode(raw).decode("ascii")


def is_signing_key(secret: str) -> bool:
    """Whether a stored secret is an Ed25519 signing key (else an HMAC secret)."""
    return secret.startswith(SIGNING_KEY_PREFIX)


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The signature of ``"{msg_id}.{timestamp}.{body}"`` by the kind of ``secret``:
    ``v1,<base64 HMAC-SHA256>`` for a ``whsec_`` secret, ``v1a,<base64 Ed25519>`` for a
    ``whsk_`` signing key."""
    signed = b"%s.%d.%s" % (msg_id.encode(), timestamp, body)
    if is_signing_key(secret):
        return "v1a," + base64.b64encode(_ed25519_key(secret).sign(signed)).decode("ascii")
    return "v1," + base64.b64encode(hmac_sha256(secret, signed)).decode("ascii")


def live_secrets(
    current: str, previous: str | None, previous_expires_at: datetime | None, now: datetime
) -> list[str]:
    """The secrets a delivery is signed with: the current one, plus the previous one while its
    grace period after a rotation lasts (so receivers can switch secrets without a gap). Each
    is an HMAC secret or an Ed25519 signing key (``sign``), whichever the webhook had then."""
    secrets = [current]
    if previous and previous_expires_at is not None and previous_expires_at > now:
        secrets.append(previous)
    return secrets


def build_headers(
    msg_id: str, timestamp: int, body: bytes, secrets: Iterable[str]
) -> dict[str, str]:
    """The request headers of one attempt; one space-separated signature per secret (``v1,``
    per HMAC secret, ``v1a,`` per Ed25519 signing key)."""
    signatures = " ".join(sign(secret, msg_id, timestamp, body) for secret in secrets)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signatures,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


# The event's data or previous attributes: decoded, or (the worker's claims on SQLite) the stored
# JSON text as an ``orjson.Fragment``, which ``orjson.dumps`` copies into the body as it is. That
# text is orjson's own (``storage.connector.JSON_CODEC``), so the bytes are those of decoding it
# and encoding it again (tests/delivery/test_signing.py), without the decode and the encode.
EventJson = Mapping[str, Any] | orjson.Fragment


def event_body(
    event_id: str,
    event_type: str,
    created_at: datetime,
    data: EventJson,
    previous_attributes: EventJson | None,
) -> bytes:
    """The JSON body POSTed for an event (see docs/webhooks.md)."""
    return orjson.dumps(event_payload(event_id, event_type, created_at, data, previous_attributes))


def event_payload(
    event_id: str,
    event_type: str,
    created_at: datetime,
    data: EventJson,
    previous_attributes: EventJson | None,
) -> dict[str, Any]:
    """The delivered body as an object: what filters see and the stream sends."""
    payload: dict[str, Any] = {
        "id": event_id,
        "type": event_type,
        "timestamp": iso(created_at),
        "data": data,
    }
    if event_type in EVENTS_WITH_PREVIOUS_ATTRIBUTES:
        payload["previous_attributes"] = (
            previous_attributes
            if isinstance(previous_attributes, orjson.Fragment)
            else dict(previous_attributes or {})
        )
    return payload


def headers_from_plain(plain: str) -> dict[str, str]:
    """The custom headers to send, from a webhook's decrypted ``headers_enc``: those stored
    before a rule of ``header_rules`` refused them are dropped."""
    return sendable(stored_headers_from_plain(plain))


def stored_headers_from_plain(plain: str) -> dict[str, str]:
    """Every custom header of a webhook's decrypted ``headers_enc`` (a JSON object)."""
    opened = orjson.loads(plain)
    if not isinstance(opened, dict):
        raise ValueError("stored headers are not an object")
    return {str(name): str(value) for name, value in opened.items()}
