"""A webhook's identity toward its receiver: how deliveries are signed (``signing``: HMAC or
Ed25519) and how hookline authenticates (``auth``: OAuth2 client credentials or mTLS).

The signing key of an Ed25519 webhook is kept like an HMAC secret (encrypted in ``secret_enc``,
rotated with an overlap in ``previous_secret_enc``); only its public key is ever shown. ``auth``
is stored encrypted whole (``auth_enc``) beside the object as shown, every secret masked
(``auth_shown``), so that reads never decrypt. A PATCH or a form may send a masked value back:
with the same ``type``, ``MASKED_VALUE`` keeps what is stored.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_private_key,
)
from yarl import URL

from hookline.crypto import SecretBox
from hookline.delivery.endpoint_auth import MTLS, OAUTH2, MutualTLS, tls_context
from hookline.delivery.payloads import MASKED_VALUE
from hookline.delivery.signing import is_signing_key, public_key_of
from hookline.delivery.ssrf import UnsafeURL, validate_webhook_url
from hookline.errors import ValidationFailed
from hookline.timeutil import utcnow

HMAC, ED25519 = "hmac", "ed25519"
SIGNING_SCHEMES = (HMAC, ED25519)
# The secrets of each auth type: encrypted, masked on every read, kept when sent back masked.
SECRET_FIELDS = {OAUTH2: ("client_secret",), MTLS: ("certificate", "private_key", "ca")}
REQUIRED_FIELDS = {
    OAUTH2: ("token_url", "client_id", "client_secret"),
    MTLS: ("certificate", "private_key"),
}


def _invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed.for_field(f"auth.{field}", message)


# -- signing -----------------------------------------------------------------------------------


def signing_of(secret: str) -> str:
    """The scheme a stored secret signs with."""
    return ED25519 if is_signing_key(secret) else HMAC


def signing_of_public_key(public_key: str | None) -> str:
    """A webhook's scheme by its stored ``public_key`` (set only for Ed25519)."""
    return ED25519 if public_key is not None else HMAC


def public_key_for(secret: str) -> str | None:
    """What a webhook shows of its current secret: the public key of an Ed25519 one."""
    return public_key_of(secret) if is_signing_key(secret) else None


# -- auth: checks --------------------------------------------------------------------------------


async def check_token_url(auth: Mapping[str, Any] | None, *, allow_private: bool) -> None:
    """An OAuth2 ``token_url`` must be https and reach a public address (the webhook URL's
    rules), unless private targets are allowed (development). May resolve DNS: call it before
    the transaction, as ``webhooks.check_url``."""
    if not auth or auth.get("type") != OAUTH2 or "token_url" not in auth:
        return
    token_url = str(auth["token_url"])
    if not allow_private and URL(token_url).scheme.lower() != "https":
        raise _invalid("token_url", "auth.token_url must use https")
    try:
        await validate_webhook_url(token_url, allow_private)
    except UnsafeURL as exc:
        raise _invalid("token_url", "auth.token_" + str(exc)) from None


def _certificates(pem: str, field: str) -> list[x509.Certificate]:
    try:
        found = x509.load_pem_x509_certificates(pem.encode())
    except ValueError:
        found = []
    if not found:
        raise _invalid(
            field, f"auth.{field} must be a PEM certificate (-----BEGIN CERTIFICATE-----)"
        )
    return found


def _private_key(pem: str) -> PrivateKeyTypes:
    try:
        return load_pem_private_key(pem.encode(), password=None)
    except TypeError:
        raise _invalid("private_key", "auth.private_key must not be encrypted") from None
    except (ValueError, UnsupportedAlgorithm):
        message = "auth.private_key must be an unencrypted PEM private key"
        raise _invalid("private_key", message) from None


def _spki(public_key: Any) -> bytes:
    spki: bytes = public_key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return spki


def check_mtls(auth: Mapping[str, Any], *, now: datetime | None = None) -> None:
    """The client certificate (chain, leaf first) parses, is valid now, and matches the
    private key; ``ca``, if given, holds certificates; OpenSSL accepts them all."""
    leaf = _certificates(auth["certificate"], "certificate")[0]
    moment = now or utcnow()
    if leaf.not_valid_after_utc <= moment:
        expired = leaf.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ")
        raise _invalid("certificate", f"auth.certificate expired at {expired}")
    try:
        certified = leaf.public_key()
    except UnsupportedAlgorithm:  # a key type or curve cryptography cannot load
        raise _invalid(
            "certificate", "auth.certificate holds a key of an unsupported type"
        ) from None
    key = _private_key(auth["private_key"])
    if _spki(certified) != _spki(key.public_key()):
        raise _invalid("private_key", "auth.private_key does not match auth.certificate")
    if auth.get("ca"):
        _certificates(auth["ca"], "ca")
    try:
        tls_context(MutualTLS(auth["certificate"], auth["private_key"], auth.get("ca")))
    except ssl.SSLError as exc:
        raise _invalid("certificate", f"auth.certificate is refused by TLS: {exc.reason}") from None


def check_auth_fits_url(auth: Mapping[str, Any] | None, url: str) -> None:
    """A client certificate is shown only in a TLS handshake: mTLS needs an https url."""
    if auth and auth.get("type") == MTLS and URL(url).scheme.lower() != "https":
        raise ValidationFailed.for_field("auth", "auth of type mtls needs an https url")


# -- auth: merging, sealing, showing ---------------------------------------------------------------


def resolve_auth(
    given: Mapping[str, Any] | None, stored: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The ``auth`` to store from what a request gave: a masked secret keeps the stored one
    of the same type; one with nothing stored to keep is refused. Checked whole (mTLS PEMs)."""
    if given is None:
        return None
    kind = given["type"]
    resolved = {name: value for name, value in given.items() if value is not None}
    for field in SECRET_FIELDS[kind]:
        if resolved.get(field) != MASKED_VALUE:
            continue
        if stored is None or stored.get("type") != kind or not stored.get(field):
            raise _invalid(field, f"auth.{field} is masked; give the value itself")
        resolved[field] = stored[field]
    for field in REQUIRED_FIELDS[kind]:
        if not resolved.get(field):
            raise _invalid(field, f"auth.{field} is required")
    if kind == MTLS:
        check_mtls(resolved)
    return resolved


def shown_auth(auth: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``auth`` as every read shows it: each field present, each secret set masked."""
    if auth is None:
        return None
    kind = auth["type"]
    fields: tuple[str, ...] = ("type", "token_url", "client_id", "client_secret", "scope")
    if kind == MTLS:
        fields = ("type", "certificate", "private_key", "ca")
    shown = {field: auth.get(field) for field in fields}
    for field in SECRET_FIELDS[kind]:
        if shown[field] is not None:
            shown[field] = MASKED_VALUE
    return shown


def seal_auth(box: SecretBox, auth: Mapping[str, Any] | None) -> dict[str, Any]:
    """The stored columns of ``auth``."""
    if auth is None:
        return {"auth_enc": None, "auth_shown": None}
    return {
        "auth_enc": box.encrypt(orjson.dumps(dict(auth)).decode()),
        "auth_shown": shown_auth(auth),
    }


def unseal_auth(box: SecretBox, token: str | None) -> dict[str, Any] | None:
    if token is None:
        return None
    opened: dict[str, Any] = orjson.loads(box.decrypt(token))
    return opened
