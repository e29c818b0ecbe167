from __future__ import annotations

from pydantic import BaseModel
from pydantic.json_schema import SkipJsonSchema

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
