"""The webhook form's identity fields: signing (Ed25519 shows its public key) and auth
(secrets masked on every page, a masked field sent back keeps the stored value, bad PEMs
shown at their field)."""

from __future__ import annotations

import html

from sqlalchemy import select

from hookline.crypto import SecretBox
from hookline.domain.webhook_identity import unseal_auth
from hookline.storage.db import Database
from hookline.storage.models import webhooks
from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.conftest import Dash
from tests.support.identity import Pki

URL = "https://127.0.0.1:9/hook"


async def _stored(db: Database, webhook_id: str) -> tuple[str | None, object]:
    async with db.read() as conn:
        row = (await conn.execute(select(webhooks).where(webhooks.c.id == webhook_id))).one()
    return row.public_key, unseal_auth(SecretBox(TEST_SECRET_KEY), row.auth_enc)


def _stripped(auth: dict[str, str]) -> dict[str, str]:
    """What the form stores of PEMs: trimmed, as every text field."""
    return {name: value.strip() for name, value in auth.items()}


def _mtls_form(pki: Pki, **fields: str) -> dict[str, object]:
    return {
        "url": URL,
        "events": ["contact.created"],
        "signing": "ed25519",
        "auth_type": "mtls",
        "auth_certificate": pki.client_certificate,
        "auth_private_key": pki.client_key,
        "auth_ca": pki.ca_pem,
        **fields,
    }


async def test_identity_fields_are_created_shown_masked_and_kept_on_edit(
    signed_in: Dash, db: Database
) -> None:
    pki = Pki()
    created = await signed_in.post(
        "/dashboard/webhooks", _mtls_form(pki), token_from="/dashboard/webhooks/new"
    )
    assert created.status_code == 303, created.text[-2000:]
    path = created.headers["location"]
    webhook_id = path.rsplit("/", 1)[1]
    public_key, auth = await _stored(db, webhook_id)
    assert public_key is not None and public_key.startswith("whpk_")
    assert auth == _stripped(pki.mtls_auth())

    page = (await signed_in.get(path)).text
    assert html.escape(public_key) in page and "Client certificate (mTLS)" in page
    assert "BEGIN" not in page
    form = (await signed_in.get(f"{path}/edit")).text
    assert "BEGIN" not in form and "********" in form
    assert 'value="ed25519" checked' in form and 'value="mtls" checked' in form

    masked = {"auth_certificate": "********", "auth_private_key": "********", "auth_ca": "********"}
    edited = await signed_in.post(
        f"{path}/edit", _mtls_form(pki, **masked), token_from=path + "/edit"
    )
    assert edited.status_code == 303, edited.text[-2000:]
    assert await _stored(db, webhook_id) == (public_key, _stripped(pki.mtls_auth()))

    none = await signed_in.post(
        f"{path}/edit", _mtls_form(pki, auth_type="", signing="ed25519"), token_from=path + "/edit"
    )
    assert none.status_code == 303
    assert await _stored(db, webhook_id) == (public_key, None)


async def test_a_key_that_does_not_match_is_shown_at_its_field(signed_in: Dash) -> None:
    pki, other = Pki(), Pki()
    response = await signed_in.post(
        "/dashboard/webhooks",
        _mtls_form(pki, auth_private_key=other.client_key),
        token_from="/dashboard/webhooks/new",
    )
    assert response.status_code == 422
    fieldset = response.text.split("Authentication to the receiver")[1].split("</fieldset>")[0]
    assert "auth.private_key does not match auth.certificate" in fieldset
