from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError, ValidationInfo, field_validator
from pydantic.json_schema import SkipJsonSchema

from hookline.domain import validation
from hookline.domain.contacts_bulk import BulkRow, refusal
from hookline.errors import ValidationFailed
from hookline.schemas.common import (
    Bool,
    Company,
    DoNotCallReason,
    Email,
    FirstName,
    LastName,
    Notes,
    PhoneNumber,
    RequestModel,
    Tags,
)
from hookline.schemas.failures import validation_failure


class ContactCreate(RequestModel):
    first_name: FirstName
    last_name: LastName | None = None
    phone_number: PhoneNumber
    email: Email | None = None
    company: Company | None = None
    tags: Tags | None = None
    notes: Notes | None = None
    do_not_call: Bool = False
    do_not_call_reason: DoNotCallReason | None = None


class ContactUpdate(RequestModel):
    """JSON merge-patch: absent fields are kept, ``null`` clears an optional field."""

    # Required fields: null is refused (by the domain, naming the field), so not documented.
    first_name: FirstName | SkipJsonSchema[None] = None
    last_name: LastName | None = None
    phone_number: PhoneNumber | SkipJsonSchema[None] = None
    email: Email | None = None
    company: Company | None = None
    tags: Tags | None = None
    notes: Notes | None = None
    # Required (false by default): null is refused by the domain, naming the field.
    do_not_call: Bool | SkipJsonSchema[None] = None
    do_not_call_reason: DoNotCallReason | None = None


class ContactOut(BaseModel):
    id: str
    first_name: str
    last_name: str | None
    phone_number: str
    email: str | None
    company: str | None
    tags: list[str]
    notes: str | None
    do_not_call: bool
    do_not_call_reason: str | None
    created_at: str
    updated_at: str


MAX_BULK_CONTACTS = 1_000
MatchOn = Literal["phone_number", "email"]


class ContactsBulk(RequestModel):
    """``POST /v1/contacts/bulk``: each row is checked on its own (``bulk_row``), so a bad row
    is refused in the results and the others still apply."""

    match_on: MatchOn
    contacts: Annotated[
        list[Any],
        Field(
            min_length=1,
            max_length=MAX_BULK_CONTACTS,
            description="Up to 1,000 objects with a contact's fields, as `POST /v1/contacts` "
            "takes them. A row matching an existing contact by `match_on` is merged into it "
            "as `PATCH` does (absent fields are kept); any other row creates a contact.",
            json_schema_extra={"items": {"type": "object"}},
        ),
    ]

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any, info: ValidationInfo) -> Any:
        # The rows' text is checked row by row (bulk_row): one bad row is that row's refusal.
        if info.field_name == "contacts":
            # The schema says every row is an object: anything else refuses the request.
            if isinstance(value, list) and not all(isinstance(row, dict) for row in value):
                raise ValueError("each contact must be a JSON object")
            return value
        return validation.refuse_unstorable(value, info.field_name or "body")


def bulk_row(index: int, raw: Any, match_on: MatchOn) -> BulkRow:
    """One row of a bulk upsert, validated as ``ContactUpdate`` (a create's required fields are
    checked by the domain, which knows whether the row matched): its fields or its refusal."""
    try:
        fields = ContactUpdate.model_validate(raw).provided()
    except ValidationError as exc:
        return BulkRow(index, None, refusal(validation_failure(exc.errors())))
    if fields.get(match_on) is None:
        missing = ValidationFailed.for_field(
            match_on, f"{match_on} is required: the rows are matched on it"
        )
        return BulkRow(index, None, refusal(missing))
    return BulkRow(index, fields, None)


class BulkError(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | None


class BulkResult(BaseModel):
    index: int
    status: Literal["created", "updated", "unchanged", "refused"]
    id: str | None = Field(description="The contact's id; null when refused.")
    error: BulkError | None = Field(
        description="Why the row was refused, as the error body words it (details.fields)."
    )


class ContactsBulkOut(BaseModel):
    results: list[BulkResult]
