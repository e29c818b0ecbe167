"""Recovery and statistics schemas (``RecoverIn``, ``RecoverOut``, ``StatsOut``)."""

from __future__ import annotations

from typing import Annotated, Literal, cast

from pydantic import AfterValidator, BaseModel, Field

from hookline.domain.recovery import DEFAULT_STATUSES, ReplayFilter
from hookline.schemas.common import Bool, RequestModel, Since, Until
from hookline.schemas.webhooks import Events

ReplayStatus = Literal["failed", "cancelled", "succeeded", "missed"]


def _distinct(values: list[str]) -> list[str]:
    kept = list(dict.fromkeys(values))
    if not kept:
        raise ValueError("statuses must list at least one status")
    return kept


class RecoverIn(RequestModel):
    since: Since = Field(description="Start of the window (event time), within retention.")
    until: Until | None = Field(default=None, description="End of the window; default now.")
    event_types: Events | None = Field(
        default=None, description="Only events of these types (default: every type)."
    )
    object_id: (
        Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")] | None
    ) = Field(
        default=None,
        description="Only events about this contact or call (a call's events also count for "
        "its contact).",
    )
    statuses: Annotated[list[ReplayStatus], AfterValidator(_distinct)] = Field(
        default=cast(list[ReplayStatus], list(DEFAULT_STATUSES)),
        description="Which deliveries to send again: `failed`, `cancelled`, `succeeded` "
        "(a replay of what was delivered), and `missed` (events of a subscribed type the "
        "webhook never got). Default: failed, cancelled, missed.",
    )
    backfill: Bool = Field(
        default=False,
        description="Let the window reach before the webhook was created: a new webhook gets "
        "the history of the types it subscribes to (with `missed`).",
    )
    dry_run: Bool = Field(
        default=False,
        description='Count only: answer 200 `{"would_queue": N}` and queue nothing.',
    )

    def replay_filter(self) -> ReplayFilter:
        return ReplayFilter(
            types=tuple(self.event_types) if self.event_types is not None else None,
            object_id=self.object_id,
            statuses=tuple(self.statuses),
            backfill=self.backfill,
        )


class RecoverOut(BaseModel):
    queued: int = Field(description="Deliveries scheduled again or created.")


class RecoverCountOut(BaseModel):
    would_queue: int = Field(description="`dry_run`: deliveries the same call would queue now.")


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
