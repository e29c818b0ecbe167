"""Recovery and statistics schemas (``RecoverIn``, ``RecoverOut``, ``StatsOut``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from hookline.schemas.common import RequestModel, Since, Until


class RecoverIn(RequestModel):
    since: Since = Field(description="Start of the window (event time), within retention.")
    until: Until | None = Field(default=None, description="End of the window; default now.")


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
    filter_errors: int = Field(
        description="Evaluations of the webhook's filter cut by the server's limits (time or "
        "memory) since the webhook was created, whatever the window; each counted as no match."
    )
