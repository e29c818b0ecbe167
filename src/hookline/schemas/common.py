"""Field types and bases shared by the resource schemas."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from hookline.domain import validation

# Fields a client may read but never write; named as such in 422 messages.
READ_ONLY_FIELDS = frozenset(
    {"id", "created_at", "updated_at", "secret", "duration_seconds", "call_status", "account_id"}
)


class RequestModel(BaseModel):
    """Request bodies refuse unknown and read-only fields: nothing is silently ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    def provided(self) -> dict[str, Any]:
        """Only the fields the client sent (merge-patch needs absent and null told apart)."""
        return {name: getattr(self, name) for name in self.model_fields_set}


def text_field(field: str, *, max_length: int, min_length: int = 0) -> AfterValidator:
    return AfterValidator(
        partial(validation.trimmed, field=field, min_length=min_length, max_length=max_length)
    )


def _optional_text(field: str, max_length: int) -> Any:
    return Annotated[str, text_field(field, max_length=max_length)]


PhoneNumber = Annotated[str, AfterValidator(validation.normalize_phone)]
Email = Annotated[str, AfterValidator(validation.normalize_email)]
Tags = Annotated[list[str], AfterValidator(validation.normalize_tags)]
FirstName = Annotated[str, text_field("first_name", min_length=1, max_length=100)]
LastName = _optional_text("last_name", 100)
Company = _optional_text("company", 200)
Notes = _optional_text("notes", 10_000)

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
