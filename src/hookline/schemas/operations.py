"""Recovery and statistics schemas (``RecoverIn``, ``RecoverOut``, ``StatsOut``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, Field

from hookline.schemas.common import RequestModel
from hookline.timeutil import to_millis


def _in_utc(value: datetime) -> datetime:
    try:
        return to_millis(value.astimezone(UTC))
    except OverflowError:
        raise ValueError("must be a time between years 1 and 9999 in UTC") from None


UtcTimestamp = Annotated[
    AwareDatetime,
    AfterValidator(_in_utc),
    Field(description="ISO 8601 with a zone, e.g. 2026-11-22T15:04:05.123Z"),
]


class RecoverIn(RequestModel):
    since: UtcTimestamp = Field(description="Start of the window (event time), within retention.")
    until: UtcTimestamp | None = Field(default=None, description="End of the window; default now.")


class RecoverOut(BaseModel):
    queued: int = Field(description="Deliveries scheduled again or created.")


class LatencyOut(BaseModel):
    p50: float | None
    p95: float | None
    p99: float | None


class StatsOut(BaseModel):
    webhook_id: str
    since: str
    until: str
    attempts: int
    succeeded: int
    failed: int
    success_rate: float | None = Field(description="succeeded / attempts, 0..1; null if none.")
    latency_ms: LatencyOut
    status_codes: dict[str, int] = Field(
        description='Attempts by HTTP status, "error" for attempts without a response.'
    )
    pending: int = Field(description="Deliveries waiting now.")
