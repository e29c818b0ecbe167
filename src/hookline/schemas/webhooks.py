"""Webhook request and response schemas (``WebhookCreate``, ``WebhookUpdate``, ``WebhookOut``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StrictStr
from pydantic.json_schema import SkipJsonSchema

from hookline.delivery import header_rules as rules
from hookline.delivery.filters import FilterError, check_filter
from hookline.domain import webhook_routing as routing
from hookline.domain.events import EVENT_TYPES
from hookline.domain.validation import MAX_URL_LENGTH, URL_PATTERN, url_syntax
from hookline.domain.webhooks import (
    MAX_REDACT_PATH,
    MAX_REDACT_PATHS,
    normalize_events,
    normalize_redact,
)
from hookline.schemas.common import Bool, RequestModel, WebhookName
from hookline.schemas.webhook_auth import Auth, AuthOut

# The syntax is checked here; whether the host is public needs DNS: ``domain.webhooks.check_url``.
Url = Annotated[
    str,
    AfterValidator(url_syntax),
    Field(
        description="http(s) URL (RFC 3986) of a public host, ..2048 chars",
        json_schema_extra={"maxLength": MAX_URL_LENGTH, "pattern": URL_PATTERN},
    ),
]
EventType = Annotated[str, Field(json_schema_extra={"enum": list(EVENT_TYPES)})]
Events = Annotated[
    list[EventType],
    AfterValidator(normalize_events),
    Field(
        description="Non-empty set of event types; duplicates are dropped.",
        json_schema_extra={"minItems": 1},
    ),
]
_HEADER_NAME = {
    "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
    "maxLength": rules.MAX_HEADER_NAME,
    "not": {"pattern": rules.RESERVED_PATTERN},
}
_HEADER_VALUE = {
    "type": "string",
    "maxLength": rules.MAX_HEADER_VALUE,
    "pattern": rules.VALUE_PATTERN,
}
_NAMES_REFUSED = (
    "not webhook-*, content-*, proxy-*, host, user-agent, connection, transfer-encoding, "
    "expect, te, trailer, upgrade, keep-alive, http2-settings, via, max-forwards or forwarded"
)
Headers = Annotated[
    dict[str, str],
    AfterValidator(routing.normalize_headers),
    Field(
        json_schema_extra={
            "propertyNames": {
                **_HEADER_NAME,
                "not": {
                    "anyOf": [
                        {"pattern": rules.RESERVED_PATTERN},
                        {"pattern": rules.CONTROL_PATTERN},
                    ]
                },
            },
            "additionalProperties": _HEADER_VALUE,
            "maxProperties": routing.MAX_HEADERS,
        },
        description="Up to 20 custom headers sent with every delivery and receiver-check "
        f"probe: names are RFC 9110 tokens, {_NAMES_REFUSED} (case-insensitive); values are "
        "..1024 visible ASCII characters and inner spaces. Stored encrypted; shown masked.",
    ),
]
HeaderPatch = Annotated[
    dict[str, str | None],
    AfterValidator(routing.normalize_header_patch),
    Field(
        json_schema_extra={
            "propertyNames": _HEADER_NAME,
            "additionalProperties": {"anyOf": [_HEADER_VALUE, {"type": "null"}]},
            "patternProperties": {rules.CONTROL_PATTERN: {"type": "null"}},
            "maxProperties": routing.MAX_HEADERS,
        },
        description="Merged into the current headers; a null value removes that header (also "
        "one stored before its name was refused). The rules of `headers` apply to each value "
        "set; a merge drops stored headers those rules now refuse.",
    ),
]


def _compiled_filter(expression: str) -> str:
    try:
        return check_filter(expression)
    except FilterError as exc:
        raise ValueError(str(exc)) from None


Filter = Annotated[
    str,
    AfterValidator(_compiled_filter),
    Field(
        json_schema_extra={"minLength": 1, "maxLength": 1024, "pattern": "\\S"},
        description="A CEL expression over `event` (the body as delivered), ..1024 chars; a "
        "delivery is created only when it is true. Example: "
        '`event.type == "call.completed" && event.data.call_status == "completed"`.',
    ),
]
RateLimit = Annotated[
    int,
    Field(
        strict=True,
        ge=routing.MIN_RATE_LIMIT,
        le=routing.MAX_RATE_LIMIT,
        description="At most this many delivery attempts start in any one-second window "
        "(1..10000); attempts over it wait, they never fail for it. Test sends and receiver-"
        "check probes count too: with the window full they are refused (429, Retry-After).",
    ),
]


Signing = Annotated[
    Literal["hmac", "ed25519"],
    Field(
        description="How deliveries are signed: `hmac` (`v1,` signatures with the shared "
        "`secret`) or `ed25519` (`v1a,` signatures the receiver verifies with `public_key`; "
        "the signing key never leaves hookline). Changing it starts a new key or secret; the "
        "old one keeps signing beside it for 24 hours."
    ),
]


RedactPath = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": r"^data(\.[^.\s]+)+$", "maxLength": MAX_REDACT_PATH},
    ),
]
Redact = Annotated[
    list[RedactPath],
    AfterValidator(normalize_redact),
    Field(
        json_schema_extra={"maxItems": MAX_REDACT_PATHS},
        description="Fields left out of what this webhook receives: dot paths into the body "
        'under `data`, e.g. `"data.phone_number"`, `"data.analysis.transcript"` (up to 50, '
        "each ..200 chars). Each must be a field of at least one subscribed type's body "
        "(GET /v1/event-types). A changed field's old value in `previous_attributes` is left "
        "out too. Applied before signing.",
    ),
]
Payload = Annotated[
    Literal["full", "thin"],
    Field(
        description="`full`: the whole event. `thin`: only `id`, `type`, `timestamp` and `data: "
        '{"id", "url"}`, the object\'s id and its API URL, to read it as it is now.'
    ),
]


class WebhookCreate(RequestModel):
    url: Url
    events: Events
    name: WebhookName | None = None
    is_active: Bool = True
    headers: Headers | None = None
    filter: Filter | None = None
    rate_limit: RateLimit | None = None
    signing: Signing = "hmac"
    auth: Auth | None = None
    redact: Redact = Field(default_factory=list)
    payload: Payload = "full"


class WebhookUpdate(RequestModel):
    """Partial update: absent fields are kept; ``name``, ``filter`` and ``rate_limit`` take
    ``null`` to clear; ``headers`` merges."""

    # null is refused for these (naming the field), so the schema does not offer it.
    url: Url | SkipJsonSchema[None] = None
    events: Events | SkipJsonSchema[None] = None
    name: WebhookName | None = None
    is_active: Bool | SkipJsonSchema[None] = None
    headers: HeaderPatch | SkipJsonSchema[None] = None
    filter: Filter | None = None
    rate_limit: RateLimit | None = None
    signing: Signing | SkipJsonSchema[None] = None
    auth: Auth | None = Field(
        default=None,
        description="Replaces the webhook's auth (null removes it). With the same `type`, a "
        'secret sent as `"********"` keeps the stored one.',
    )
    redact: Redact | None = Field(default=None, description="Replaces the paths; null clears.")
    payload: Payload | SkipJsonSchema[None] = None


class WebhookOut(BaseModel):
    id: str
    url: str
    name: str | None
    events: list[str]
    is_active: bool
    secret: str | None = Field(
        description="HMAC webhooks: full only at creation, on rotation and on a switch to "
        "hmac; otherwise exactly whsec_********. Ed25519 webhooks: null."
    )
    signing: Literal["hmac", "ed25519"]
    public_key: str | None = Field(
        description="Ed25519 webhooks: the public key (whpk_ + base64) that verifies `v1a` "
        "signatures; null for hmac."
    )
    auth: AuthOut | None = Field(description='Secrets shown as "********".')
    disabled_reason: str | None
    headers: dict[str, str] = Field(description='Names of the custom headers; values "********".')
    filter: str | None
    rate_limit: int | None
    redact: list[str]
    payload: Literal["full", "thin"]
    created_at: str
    updated_at: str


class WebhookSecretOut(BaseModel):
    secret: StrictStr | None = Field(
        description="HMAC webhooks: the new secret, in full (whsec_ + base64 of 32 bytes); "
        "null for Ed25519 webhooks."
    )
    public_key: StrictStr | None = Field(
        description="Ed25519 webhooks: the new public key (whpk_...); null for hmac."
    )
