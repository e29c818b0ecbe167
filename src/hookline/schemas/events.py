"""The event object of ``GET /v1/events``: the delivered payload, every field present."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class EventOut(BaseModel):
    id: str = Field(description="evt_...; the webhook-id header of its deliveries.")
    type: str = Field(description="contact.created, ..., call.completed, or webhook.test.")
    timestamp: str
    data: dict[str, Any] = Field(description="The contact or call object at the time.")
    previous_attributes: dict[str, Any] | None = Field(
        description="contact.updated: the changed fields' old values; null for other types."
    )
