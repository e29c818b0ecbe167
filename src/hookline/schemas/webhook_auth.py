"""A webhook's ``auth``: how hookline authenticates to the receiver beside the signature
(``domain.webhook_identity`` checks the PEMs and keeps masked secrets)."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Discriminator, Field, StrictStr, Tag

from hookline.delivery.endpoint_auth import MTLS, OAUTH2
from hookline.domain.validation import MAX_URL_LENGTH, URL_PATTERN, url_syntax
from hookline.schemas.common import RequestModel

MASK_NOTE = 'Stored encrypted; shown as "********".'
# A certificate chain or a CA bundle of a few certificates; the body's 64 KiB bounds the rest.
MAX_PEM = 32_768


def _text(max_length: int, description: str) -> object:
    return Field(min_length=1, max_length=max_length, description=description)


class OAuth2ClientCredentials(RequestModel):
    """OAuth2 client credentials (RFC 6749 4.4): hookline fetches a token from `token_url`
    (client_secret_basic), sends it as `Authorization: Bearer`, reuses it until shortly before
    it expires, and fetches a new one once when the receiver answers 401."""

    type: Literal["oauth2_client_credentials"]
    token_url: Annotated[
        StrictStr,
        AfterValidator(partial(url_syntax, field="auth.token_url")),
        Field(
            description="The token endpoint: https (unless the server allows private "
            "targets), a public address, ..2048 chars.",
            json_schema_extra={"maxLength": MAX_URL_LENGTH, "pattern": URL_PATTERN},
        ),
    ]
    client_id: Annotated[StrictStr, _text(255, "The client's id, 1..255 chars.")]
    client_secret: Annotated[StrictStr, _text(1024, f"1..1024 chars. {MASK_NOTE}")]
    scope: Annotated[StrictStr, _text(1024, "Space-separated scopes to ask for.")] | None = None


Pem = Annotated[StrictStr, Field(min_length=1, max_length=MAX_PEM)]


class MutualTLS(RequestModel):
    """A client certificate hookline shows in the TLS handshake (the url must be https)."""

    type: Literal["mtls"]
    certificate: Pem = Field(
        description="The client's certificate (PEM, leaf first, then any intermediates); "
        f"valid now and matching `private_key`. {MASK_NOTE}"
    )
    private_key: Pem = Field(
        description=f"The client's private key (PEM, unencrypted). {MASK_NOTE}"
    )
    ca: Pem | None = Field(
        default=None,
        description="The CA (PEM) that signed the receiver's server certificate, trusted "
        f"instead of the system's roots; null for the system's roots. {MASK_NOTE}",
    )


def _auth_type(value: Any) -> Any:
    # A callable discriminator: every field of a request model (``type`` too) is checked by
    # ``RequestModel``'s before-validator, which a plain ``discriminator="type"`` forbids.
    return value.get("type") if isinstance(value, dict) else getattr(value, "type", None)


Auth = Annotated[
    Annotated[OAuth2ClientCredentials, Tag(OAUTH2)] | Annotated[MutualTLS, Tag(MTLS)],
    Discriminator(
        _auth_type,
        custom_error_type="auth_type",
        custom_error_message=f"auth.type must be {OAUTH2} or {MTLS}",
    ),
    Field(
        description="How hookline authenticates to the receiver, beside the signature: "
        "`oauth2_client_credentials` or `mtls`; null for none.",
    ),
]


class OAuth2ClientCredentialsOut(BaseModel):
    type: Literal["oauth2_client_credentials"]
    token_url: str
    client_id: str
    client_secret: Literal["********"]
    scope: str | None


class MutualTLSOut(BaseModel):
    type: Literal["mtls"]
    certificate: Literal["********"]
    private_key: Literal["********"]
    ca: Literal["********"] | None


AuthOut = Annotated[OAuth2ClientCredentialsOut | MutualTLSOut, Field(discriminator="type")]
