from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.thin_data import ThinData


T = TypeVar("T", bound="ThinEvent")


@_attrs_define
class ThinEvent:
    """The body a webhook with `payload: "thin"` receives, whatever the type: the event's ids
    and where to read its object now.

        Attributes:
            data (ThinData):
            id (str): The `webhook-id` header; dedupe on it.
            timestamp (str): When the event happened, ISO 8601 UTC.
            type_ (str): The event type (GET /v1/event-types).
    """

    data: ThinData
    id: str
    timestamp: str
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        id = self.id

        timestamp = self.timestamp

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "id": id,
                "timestamp": timestamp,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.thin_data import ThinData

        d = dict(src_dict)
        data = ThinData.from_dict(d.pop("data"))

        id = d.pop("id")

        timestamp = d.pop("timestamp")

        type_ = d.pop("type")

        thin_event = cls(
            data=data,
            id=id,
            timestamp=timestamp,
            type_=type_,
        )

        thin_event.additional_properties = d
        return thin_event

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
