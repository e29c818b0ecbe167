"""Call request and response schemas (``CallCreate``, ``CallComplete``, ``CallOut``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import AfterValidator, BaseModel, Field

from hookline.domain.validation import TEXT_PATTERN
from hookline.schemas.common import (
    CustomerPhone,
    EndedAt,
    RequestModel,
    StartedAt,
    json_object_schema,
)

# Metadata is opaque to us; the cap keeps one call from bloating every event and delivery.
MAX_METADATA_BYTES = 16 * 1024

CallType = Literal["inbound", "outbound"]
CallStatus = Literal["in-progress", "completed", "failed", "no-answer", "busy"]
FinalStatus = Literal["completed", "failed", "no-answer", "busy"]


def _bounded_metadata(value: dict[str, Any]) -> dict[str, Any]:
    try:
        size = len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        raise ValueError(
            "metadata holds a value JSON cannot represent (e.g. a huge integer)"
        ) from None
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata must be at most {MAX_METADATA_BYTES // 1024} KiB as JSON")
    return value


Metadata = Annotated[
    dict[str, Any], AfterValidator(_bounded_metadata), json_object_schema(MAX_METADATA_BYTES)
]


class CallCreate(RequestModel):
    call_type: CallType
    customer_phone_number: CustomerPhone
    contact_id: (
        Annotated[str, Field(max_length=64, json_schema_extra={"pattern": TEXT_PATTERN})] | None
    ) = Field(
        default=None,
        description="The account's contact; when absent, the contact with this phone number.",
    )
    call_started_at: StartedAt | None = Field(
        default=None, description="ISO 8601 with a zone; default now."
    )
    metadata: Metadata | None = None


class CallComplete(RequestModel):
    call_status: FinalStatus
    call_ended_at: EndedAt | None = Field(
        default=None, description="ISO 8601 with a zone, not before call_started_at; default now."
    )


class CallOut(BaseModel):
    id: str
    contact_id: str | None
    call_type: CallType
    customer_phone_number: str
    call_status: CallStatus
    call_started_at: str
    call_ended_at: str | None
    duration_seconds: int | None
    metadata: dict[str, Any] | None
    created_at: str
    updated_at: str
