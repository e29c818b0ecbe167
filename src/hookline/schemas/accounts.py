"""Account settings' request and response schemas (``AccountUpdate``, ``AccountOut``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StrictInt

from hookline.domain.accounts import MAX_CALL_SECONDS, RETENTION_DAYS
from hookline.schemas.common import RequestModel

RetentionDays = Annotated[StrictInt, Field(ge=RETENTION_DAYS[0], le=RETENTION_DAYS[1])]
MaxCallSeconds = Annotated[StrictInt, Field(ge=MAX_CALL_SECONDS[0], le=MAX_CALL_SECONDS[1])]


class AccountUpdate(RequestModel):
    retention_days: RetentionDays = Field(
        default=None,  # type: ignore[assignment]  # absent: unchanged; null is refused
        description="How long the account's data is kept, in days (1..3650; default 30).",
    )
    max_call_seconds: MaxCallSeconds = Field(
        default=None,  # type: ignore[assignment]
        description="A call still in progress this long after its start is ended by the "
        "server with `call_status` `timed-out` (60..604800; default 3600). Applies to calls "
        "started after the change.",
    )


class AccountOut(BaseModel):
    id: str
    name: str
    retention_days: int
    max_call_seconds: int
    created_at: str
