"""A webhook's identity rules without the HTTP layer: the OAuth2 token URL's https and
public-address rules (unless private targets are allowed), the mTLS PEM checks (expired,
encrypted key), and masked secrets kept only for the same auth type."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import trustme
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    PrivateFormat,
    load_pem_private_key,
)

from hookline.domain.webhook_identity import check_token_url, resolve_auth
from hookline.errors import ValidationFailed
from tests.support.identity import Pki


def _field(exc: pytest.ExceptionInfo[ValidationFailed]) -> tuple[str, str]:
    details = exc.value.details
    assert details is not None
    [entry] = details["fields"]
    return entry["field"], entry["message"]


def _oauth2(token_url: str) -> dict[str, str]:
    return {
        "type": "oauth2_client_credentials",
        "token_url": token_url,
        "client_id": "c",
        "client_secret": "s",
    }


@pytest.mark.parametrize(
    ("token_url", "message"),
    [
        ("http://auth.example.com/token", "auth.token_url must use https"),
        ("https://127.0.0.1/token", "auth.token_url must point to a public address"),
        ("https://localhost:8443/token", "auth.token_url must point to a public address"),
        ("https://10.1.2.3/token", "auth.token_url must point to a public address"),
    ],
)
async def test_the_token_url_must_be_https_and_public(token_url: str, message: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        await check_token_url(_oauth2(token_url), allow_private=False)
    field, text = _field(refused)
    assert field == "auth.token_url"
    assert text.startswith(message)
    await check_token_url(_oauth2(token_url), allow_private=True)  # development: allowed


async def test_a_public_https_token_url_passes() -> None:
    await check_token_url(_oauth2("https://93.184.215.14/token"), allow_private=False)


def test_an_expired_certificate_and_an_encrypted_key_are_refused() -> None:
    ca = trustme.CA()
    old = ca.issue_cert(
        "client.example",
        not_before=datetime(2020, 1, 1, tzinfo=UTC),
        not_after=datetime(2021, 1, 1, tzinfo=UTC),
    )
    expired = {
        "type": "mtls",
        "certificate": old.cert_chain_pems[0].bytes().decode(),
        "private_key": old.private_key_pem.bytes().decode(),
    }
    with pytest.raises(ValidationFailed) as refused:
        resolve_auth(expired, None)
    assert _field(refused) == (
        "auth.certificate",
        "auth.certificate expired at 2021-01-01T00:00:00Z",
    )

    pki = Pki()
    key = load_pem_private_key(pki.client_key.encode(), password=None)
    locked = key.private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(b"passphrase")
    ).decode()
    with pytest.raises(ValidationFailed) as refused:
        resolve_auth(pki.mtls_auth(private_key=locked), None)
    assert _field(refused) == ("auth.private_key", "auth.private_key must not be encrypted")


def test_masked_secrets_are_kept_only_for_the_same_type() -> None:
    pki = Pki()
    stored = pki.mtls_auth()
    kept = resolve_auth({**stored, "certificate": "********", "private_key": "********"}, stored)
    assert kept == stored
    with pytest.raises(ValidationFailed) as refused:
        resolve_auth({**_oauth2("https://a.example/t"), "client_secret": "********"}, stored)
    assert _field(refused)[0] == "auth.client_secret"
    assert resolve_auth({**stored, "ca": None}, stored) == {
        "type": "mtls",
        "certificate": stored["certificate"],
        "private_key": stored["private_key"],
    }


# A certificate valid until 2126 whose key is on secp112r1, a curve ``cryptography`` cannot load.
_UNSUPPORTED_KEY_CERTIFICATE = """-----BEGIN CERTIFICATE-----
MIIBPzCCAQigAwIBAgIUcr7mbnzBzE5kRVuJgC8l2Gb0OnwwCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOY2xpZW50LmV4YW1wbGUwIBcNMjYxMjA4MDI0MDIyWhgPMjEy
NjExMTQwMjQwMjJaMBkxFzAVBgNVBAMMDmNsaWVudC5leGFtcGxlMDIwEAYHKoZI
zj0CAQYFK4EEAAYDHgAEldFPApAWy2tyRHVFsQN7ns9fOW/VJqQ6bMkxPqNTMFEw
HQYDVR0OBBYEFCzeeo3qJAbM/dxKn92BWMK2A1D3MB8GA1UdIwQYMBaAFCzeeo3q
JAbM/dxKn92BWMK2A1D3MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDJQAw
IgIPALwIAA+vNZtUVB/QU6/SAg8A1Yu+DtYm3NViCtr4zNw=
-----END CERTIFICATE-----
"""


def test_a_certificate_whose_key_cannot_be_read_is_refused_naming_it() -> None:
    auth = Pki().mtls_auth(certificate=_UNSUPPORTED_KEY_CERTIFICATE)
    with pytest.raises(ValidationFailed) as refused:
        resolve_auth(auth, None)
    field, message = _field(refused)
    assert field == "auth.certificate"
    assert "key" in message
