"""Webhook request and response schemas (``WebhookCreate``, ``WebhookUpdate``, ``WebhookOut``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from hookline.delivery.filters import FilterError, check_filter
from hookline.domain import webhook_routing as routing
from hookline.domain.events import EVENT_TYPES
from hookline.domain.validation import MAX_URL_LENGTH, URL_PATTERN, url_syntax
from hookline.domain.webhooks import normalize_events
from hookline.schemas.common import Bool, RequestModel, WebhookName

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
_HEADER_NAMES = {
    "propertyNames": {
        "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
        "maxLength": routing.MAX_HEADER_NAME,
        "not": {"pattern": routing.reserved_name_pattern()},
    },
    "maxProperties": routing.MAX_HEADERS,
}
Headers = Annotated[
    dict[str, str],
    AfterValidator(routing.normalize_headers),
    Field(
        json_schema_extra=_HEADER_NAMES,
        description="Up to 20 custom headers sent with every delivery (RFC 9110 names, not "
        "webhook-*, content-type, content-length, host, user-agent, connection or "
        "transfer-encoding; values ..1024 chars, no CR/LF). Stored encrypted; shown masked.",
    ),
]
HeaderPatch = Annotated[
    dict[str, str | None],
    AfterValidator(routing.normalize_header_patch),
    Field(
        json_schema_extra=_HEADER_NAMES,
        description="Merged into the current headers; a null value removes that header.",
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
        "(1..10000); attempts over it wait, they never fail for it.",
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


class WebhookOut(BaseModel):
    id: str
    url: str
    name: str | None
    events: list[str]
    is_active: bool
    secret: str = Field(description="Full only at creation; otherwise exactly whsec_********.")
    disabled_reason: str | None
    headers: dict[str, str] = Field(description='Names of the custom headers; values "********".')
    filter: str | None
    rate_limit: int | None
    created_at: str
    updated_at: str


class WebhookSecretOut(BaseModel):
    secret: str = Field(description="The new secret, in full: whsec_ + base64 of 32 bytes.")
