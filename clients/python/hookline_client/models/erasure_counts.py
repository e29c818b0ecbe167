from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ErasureCounts")


@_attrs_define
class ErasureCounts:
    """
    Attributes:
        attempts (int): Their attempts (request and response bodies), deleted.
        calls (int): Calls whose number, metadata and analysis were removed.
        deliveries (int): Their deliveries, deleted.
        events (int): Events about the contact or its calls, deleted.
        idempotent_responses (int): Stored Idempotency-Key responses naming the contact or its calls, deleted.
    """

    attempts: int
    calls: int
    deliveries: int
    events: int
    idempotent_responses: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        calls = self.calls

        deliveries = self.deliveries

        events = self.events

        idempotent_responses = self.idempotent_responses

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "calls": calls,
                "deliveries": deliveries,
                "events": events,
                "idempotent_responses": idempotent_responses,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        calls = d.pop("calls")

        deliveries = d.pop("deliveries")

        events = d.pop("events")

        idempotent_responses = d.pop("idempotent_responses")

        erasure_counts = cls(
            attempts=attempts,
            calls=calls,
            deliveries=deliveries,
            events=events,
            idempotent_responses=idempotent_responses,
        )

        erasure_counts.additional_properties = d
        return erasure_counts

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
