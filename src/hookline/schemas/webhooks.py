"""Webhook request and response schemas (``WebhookCreate``, ``WebhookUpdate``, ``WebhookOut``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from hookline.domain.webhooks import normalize_events
from hookline.schemas.common import RequestModel, text_field

# Full URL checks (scheme, length, public address) need DNS: ``domain.webhooks.check_url``.
Url = Annotated[str, Field(description="http(s) URL of a public host, ..2048 chars")]
Events = Annotated[
    list[str],
    AfterValidator(normalize_events),
    Field(description="Non-empty set of event types; duplicates are dropped."),
]
WebhookName = Annotated[str, text_field("name", max_length=200)]


class WebhookCreate(RequestModel):
    url: Url
    events: Events
    name: WebhookName | None = None
    is_active: bool = True


class WebhookUpdate(RequestModel):
    """Partial update: absent fields are kept; ``name: null`` clears the name."""

    url: Url | None = None
    events: Events | None = None
    name: WebhookName | None = None
    is_active: bool | None = None


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
