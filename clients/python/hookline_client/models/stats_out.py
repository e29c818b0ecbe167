from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.latency_out import LatencyOut
    from ..models.stats_out_status_codes import StatsOutStatusCodes


T = TypeVar("T", bound="StatsOut")


@_attrs_define
class StatsOut:
    """
    Attributes:
        attempts (int):
        failed (int):
        filter_errors (int): Evaluations of the webhook's filter cut by the server's limits (time or memory) since the
            webhook was created, whatever the window; each counted as no match.
        latency_ms (LatencyOut):
        pending (int): Deliveries waiting now.
        since (str):
        status_codes (StatsOutStatusCodes): Attempts by HTTP status, "error" for attempts without a response.
        succeeded (int):
        success_rate (float | None): succeeded / attempts, 0..1; null if none.
        until (str):
        webhook_id (str):
    """

    attempts: int
    failed: int
    filter_errors: int
    latency_ms: LatencyOut
    pending: int
    since: str
    status_codes: StatsOutStatusCodes
    succeeded: int
    success_rate: float | None
    until: str
    webhook_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        failed = self.failed

        filter_errors = self.filter_errors

        latency_ms = self.latency_ms.to_dict()

        pending = self.pending

        since = self.since

        status_codes = self.status_codes.to_dict()

        succeeded = self.succeeded

        success_rate: float | None
        success_rate = self.success_rate

        until = self.until

        webhook_id = self.webhook_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "failed": failed,
                "filter_errors": filter_errors,
                "latency_ms": latency_ms,
                "pending": pending,
                "since": since,
                "status_codes": status_codes,
                "succeeded": succeeded,
                "success_rate": success_rate,
                "until": until,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.latency_out import LatencyOut
        from ..models.stats_out_status_codes import StatsOutStatusCodes

        d = dict(src_dict)
        attempts = d.pop("attempts")

        failed = d.pop("failed")

        filter_errors = d.pop("filter_errors")

        latency_ms = LatencyOut.from_dict(d.pop("latency_ms"))

        pending = d.pop("pending")

        since = d.pop("since")

        status_codes = StatsOutStatusCodes.from_dict(d.pop("status_codes"))

        succeeded = d.pop("succeeded")

        def _parse_success_rate(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        success_rate = _parse_success_rate(d.pop("success_rate"))

        until = d.pop("until")

        webhook_id = d.pop("webhook_id")

        stats_out = cls(
            attempts=attempts,
            failed=failed,
            filter_errors=filter_errors,
            latency_ms=latency_ms,
            pending=pending,
            since=since,
            status_codes=status_codes,
            succeeded=succeeded,
            success_rate=success_rate,
            until=until,
            webhook_id=webhook_id,
        )

        stats_out.additional_properties = d
        return stats_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
