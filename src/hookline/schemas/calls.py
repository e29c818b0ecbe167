"""Call request and response schemas (``CallCreate``, ``CallComplete``, ``CallOut``)."""

from __future__ import annotations

import re
from functools import partial
from typing import Annotated, Any, Literal

import orjson
from pydantic import AfterValidator, BaseModel, Field, RootModel, StrictBool, field_validator

from hookline.domain import validation
from hookline.domain.calls import MAX_CALL_DURATION
from hookline.domain.validation import MAX_URL_LENGTH, TEXT_PATTERN, URL_PATTERN, url_syntax
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
CallStatus = Literal[
    "in-progress", "completed", "failed", "no-answer", "busy", "canceled", "timed-out"
]
FinalStatus = Literal["completed", "failed", "no-answer", "busy", "canceled"]
"""The statuses a caller ends a call with; ``timed-out`` is the server's alone."""


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


LeadQualification = Literal["qualified", "unqualified", "unknown"]
# Money as a decimal string, never a float: "0.42", "12", "0.0075".
DECIMAL_PATTERN = "^[0-9]{1,12}(?:\\.[0-9]{1,10})?$"


def _decimal_string(value: str) -> str:
    if not re.fullmatch(DECIMAL_PATTERN, value):
        raise ValueError('cost must be a decimal string such as "0.42" (no sign or exponent)')
    return value


def _text(max_length: int) -> Any:
    # Control characters (other than tab, CR, LF) are refused for every field by RequestModel;
    # the pattern says so in the schema.
    return Field(max_length=max_length, json_schema_extra={"pattern": TEXT_PATTERN})


Text200 = Annotated[str, _text(200)]
Transcript = Annotated[str, _text(50_000)]
Summary = Annotated[str, _text(5_000)]
RecordingUrl = Annotated[
    str,
    AfterValidator(partial(url_syntax, field="recording_url")),
    Field(json_schema_extra={"maxLength": MAX_URL_LENGTH, "pattern": URL_PATTERN}),
]
Cost = Annotated[
    str,
    AfterValidator(_decimal_string),
    Field(
        description='A decimal string, e.g. "0.42".',
        json_schema_extra={"maxLength": 23, "pattern": DECIMAL_PATTERN},
    ),
]


class JsonObject(RootModel[dict[str, Any]]):
    """A body that is any JSON object JSON and the databases can hold."""

    @field_validator("root", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        return validation.refuse_unstorable(value, "body")


class Outcome(JsonObject):
    """A call's structured outcome, validated against the account's call analysis schema."""


class AnalysisSchemaIn(JsonObject):
    """A JSON Schema of the outcome: `type` object, string, number, integer, boolean or
    array; `properties`, `required`, `additionalProperties` (a boolean), `items`, `enum`,
    `minimum`/`maximum`, `minLength`/`maxLength`, `maxItems`, `description`. Nothing else."""


class AnalysisSchemaOut(BaseModel):
    version: int | None = Field(description="Starts at 1; each PUT adds one. Null: no schema.")
    schema_: dict[str, Any] | None = Field(alias="schema")
    created_at: str | None


class CallAnalysis(RequestModel):
    """What the calling product concluded about a call; every field optional."""

    assistant_id: Text200 | None = Field(
        default=None, description="The assistant (agent) that handled the call, ..200 chars."
    )
    transcript: Transcript | None = None
    summary: Summary | None = None
    recording_url: RecordingUrl | None = None
    intent: Text200 | None = None
    lead_qualification: LeadQualification | None = None
    appointment_booked: StrictBool | None = None
    cost: Cost | None = None
    outcome: dict[str, Any] | None = Field(
        default=None,
        description="The structured outcome, validated against the account's call analysis "
        "schema; fires `call.analyzed` after `call.completed`.",
    )


class CallComplete(RequestModel):
    call_status: FinalStatus
    call_ended_at: EndedAt | None = Field(
        default=None,
        description="ISO 8601 with a zone, not before call_started_at and at most "
        f"{MAX_CALL_DURATION.days} days after it; default now.",
    )
    analysis: CallAnalysis | None = Field(
        default=None,
        description="The call's outcome. `lead_qualification: qualified` also fires "
        "`lead.qualified`, `appointment_booked: true` also fires `appointment.booked`.",
    )


class CallAnalysisOut(BaseModel):
    assistant_id: str | None
    transcript: str | None
    summary: str | None
    recording_url: str | None
    intent: str | None
    lead_qualification: LeadQualification | None
    appointment_booked: bool | None
    cost: str | None = Field(description='A decimal string, e.g. "0.42", or null.')
    outcome: dict[str, Any] | None = Field(
        description="The structured outcome (the account's call analysis schema), or null."
    )
    outcome_schema_version: int | None = Field(
        description="The version of the schema `outcome` was validated against; null when "
        "there is no outcome or the account had no schema."
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
    analysis: CallAnalysisOut | None
    created_at: str
    updated_at: str
