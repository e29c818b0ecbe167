"""The erasure objects of ``POST /v1/contacts/{id}/erase`` and ``GET /v1/erasures/{id}``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ErasureAccepted(BaseModel):
    erasure_id: str = Field(description="er_...; follow it with GET /v1/erasures/{id}.")


class ErasureCounts(BaseModel):
    calls: int = Field(description="Calls whose number, metadata and analysis were removed.")
    events: int = Field(description="Events about the contact or its calls, deleted.")
    deliveries: int = Field(description="Their deliveries, deleted.")
    attempts: int = Field(description="Their attempts (request and response bodies), deleted.")
    idempotent_responses: int = Field(
        description="Stored Idempotency-Key responses naming the contact or its calls, deleted."
    )


class ErasureNotice(BaseModel):
    webhook_id: str
    event_id: str | None = Field(description="The contact.erased event sent to it; null: none.")
    status: Literal["pending", "succeeded", "failed", "cancelled", "not_sent"] = Field(
        description="Its delivery's status: `succeeded` once the receiver acknowledged it; "
        "`not_sent` when the webhook was inactive or deleted."
    )


class ErasureOut(BaseModel):
    id: str
    contact_id: str
    status: Literal["pending", "running", "done"]
    step: Literal["calls", "events", "idempotency", "notify", "done"] = Field(
        description="What the job is removing now."
    )
    counts: ErasureCounts
    webhooks: list[ErasureNotice] = Field(
        description="The webhooks told (once `done`), and what each acknowledged."
    )
    created_at: str
    finished_at: str | None
