from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from hookline.schemas.common import RequestModel

DeliveryStatus = Literal["pending", "succeeded", "failed", "cancelled"]


class DeliveryOut(BaseModel):
    id: str
    webhook_id: str
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    last_error: str | None
    next_attempt_at: str | None
    created_at: str
    updated_at: str


class AttemptOut(BaseModel):
    attempted_at: str
    duration_ms: int
    status_code: int | None
    succeeded: bool
    error: str | None
    response_body: str | None


class DeliveryDetailOut(DeliveryOut):
    attempt_log: list[AttemptOut]


class TestEventRequest(RequestModel):
    event_type: str = Field(
        max_length=64, description="A type of GET /v1/event-types; its example event is sent."
    )


class TestEventOut(BaseModel):
    event_id: str
    message: str
