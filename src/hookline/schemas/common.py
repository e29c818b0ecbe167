"""Field types and bases shared by the resource schemas.

Every rule a field's validator enforces is also in its JSON schema (``pattern``, ``maxLength``,
...), so the OpenAPI document describes exactly what the server accepts.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
)

from hookline.domain import validation

# Fields a client may read but never write; named as such in 422 messages.
READ_ONLY_FIELDS = frozenset(
    {
        "id",
        "created_at",
        "updated_at",
        "secret",
        "public_key",
        "duration_seconds",
        "call_status",
        "account_id",
    }
)


class RequestModel(BaseModel):
    """Request bodies refuse unknown and read-only fields: nothing is silently ignored.

    No string anywhere in a body (nested ones and object keys included) may hold a C0 control
    character other than tab, CR and LF, and no number may be NaN or infinite (``NaN`` and
    ``1e400`` parse, but JSON cannot hold them): checked here, once, for every field of every
    model.
    """

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any, info: ValidationInfo) -> Any:
        return validation.refuse_unstorable(value, info.field_name or "body")

    def provided(self) -> dict[str, Any]:
        """Only the fields the client sent (merge-patch needs absent and null told apart)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


def _documented(**schema: Any) -> Any:
    """JSON schema keywords for a rule our own validator enforces (with our own messages)."""
    return Field(json_schema_extra=schema)


def name_field(field: str, *, max_length: int, required: bool) -> Any:
    """A trimmed name showing a visible character; an optional one may be blank (→ null)."""
    pattern = validation.NAME_PATTERN if required else validation.OPTIONAL_NAME_PATTERN
    return Annotated[
        str,
        AfterValidator(
            partial(validation.name, field=field, max_length=max_length, required=required)
        ),
        _documented(maxLength=max_length, pattern=pattern),
    ]


def text_field(field: str, *, max_length: int) -> Any:
    return Annotated[
        str,
        AfterValidator(partial(validation.text, field=field, max_length=max_length)),
        _documented(maxLength=max_length, pattern=validation.TEXT_PATTERN),
    ]


def phone_field(field: str) -> Any:
    return Annotated[
        str,
        AfterValidator(partial(validation.normalize_phone, field=field)),
        _documented(pattern=validation.PHONE_PATTERN, description="E.164, e.g. +15551234567"),
    ]


def timestamp_field(field: str) -> Any:
    """The one type of every date and time the API takes, in a body or a query string: its
    window (``validation.FIRST_YEAR``..``LAST_YEAR``) keeps every sum and difference of times
    the server computes representable."""
    return Annotated[
        datetime,
        BeforeValidator(partial(validation.timestamp, field=field)),
        _documented(pattern=validation.TIMESTAMP_PATTERN),
    ]


JSON_VALUE = "JsonValue"
#: A JSON value as the server stores it: integers within 64 bits, no control characters in text.
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "integer", "minimum": -(2**63), "maximum": 2**64 - 1},
        {"type": "number", "not": {"type": "integer"}},
        {"type": "string", "pattern": validation.TEXT_PATTERN},
        {"type": "array", "items": {"$ref": f"#/components/schemas/{JSON_VALUE}"}},
        {
            "type": "object",
            "propertyNames": {"pattern": validation.TEXT_PATTERN},
            "additionalProperties": {"$ref": f"#/components/schemas/{JSON_VALUE}"},
        },
    ]
}


def json_object_schema(max_bytes: int) -> Any:
    return _documented(
        propertyNames={"pattern": validation.TEXT_PATTERN},
        additionalProperties={"$ref": f"#/components/schemas/{JSON_VALUE}"},
        description=f"A JSON object, ..{max_bytes // 1024} KiB as JSON.",
    )


PhoneNumber = phone_field("phone_number")
Email = Annotated[
    str,
    AfterValidator(validation.normalize_email),
    _documented(maxLength=validation.MAX_EMAIL_LENGTH, pattern=validation.EMAIL_PATTERN),
]
Tags = Annotated[
    list[
        Annotated[
            str,
            _documented(maxLength=validation.MAX_TAG_LENGTH, pattern=validation.NAME_PATTERN),
        ]
    ],
    AfterValidator(validation.normalize_tags),
    _documented(
        description=f"..{validation.MAX_TAGS} distinct tags (duplicates are dropped first)."
    ),
]
CustomerPhone = phone_field("customer_phone_number")
StartedAt = timestamp_field("call_started_at")
EndedAt = timestamp_field("call_ended_at")
Since = timestamp_field("since")
Until = timestamp_field("until")
WebhookName = name_field("name", max_length=200, required=False)
FirstName = name_field("first_name", max_length=100, required=True)
LastName = name_field("last_name", max_length=100, required=False)
Company = name_field("company", max_length=200, required=False)
Notes = text_field("notes", max_length=10_000)
DoNotCallReason = name_field("do_not_call_reason", max_length=200, required=False)
Bool = StrictBool

Limit = Annotated[int, Field(ge=1, le=100, description="Page size, 1..100.")]


class SuccessOut(BaseModel):
    success: bool = True
    message: str


class ErrorField(BaseModel):
    field: str
    message: str


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | None = None
    request_id: str


class ErrorOut(BaseModel):
    success: bool = False
    error: ErrorDetail
