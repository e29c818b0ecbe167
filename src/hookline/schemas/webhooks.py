"""Webhook request and response schemas (``WebhookCreate``, ``WebhookUpdate``, ``WebhookOut``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

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


class WebhookCreate(RequestModel):
    url: Url
    events: Events
    name: WebhookName | None = None
    is_active: Bool = True


class WebhookUpdate(RequestModel):
    """Partial update: absent fields are kept; ``name: null`` clears the name."""

    # null is refused for these (naming the field), so the schema does not offer it.
    url: Url | SkipJsonSchema[None] = None
    events: Events | SkipJsonSchema[None] = None
    name: WebhookName | None = None
    is_active: Bool | SkipJsonSchema[None] = None


class WebhookOut(BaseModel):
    id: str
    url: str
    name: str | None
    events: list[str]
    is_active: bool
    secret: str = Field(description="Full only at creation; otherwise exactly whsec_********.")
    disabled_reason: str | None
    created_at: str
    updated_at: str


class WebhookSecretOut(BaseModel):
    secret: str = Field(description="The new secret, in full: whsec_ + base64 of 32 bytes.")
