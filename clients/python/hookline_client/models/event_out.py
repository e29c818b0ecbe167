from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.event_out_data import EventOutData
    from ..models.event_out_previous_attributes_type_0 import (
        EventOutPreviousAttributesType0,
    )


T = TypeVar("T", bound="EventOut")


@_attrs_define
class EventOut:
    """
    Attributes:
        data (EventOutData): The contact or call object at the time.
        id (str): evt_...; the webhook-id header of its deliveries.
        previous_attributes (EventOutPreviousAttributesType0 | None): contact.updated: the changed fields' old values;
            null for other types.
        timestamp (str):
        type_ (str): contact.created, ..., call.completed, or webhook.test.
    """

    data: EventOutData
    id: str
    previous_attributes: EventOutPreviousAttributesType0 | None
    timestamp: str
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_out_previous_attributes_type_0 import (
            EventOutPreviousAttributesType0,
        )

        data = self.data.to_dict()

        id = self.id

        previous_attributes: dict[str, Any] | None
        if isinstance(self.previous_attributes, EventOutPreviousAttributesType0):
            previous_attributes = self.previous_attributes.to_dict()
        else:
            previous_attributes = self.previous_attributes

        timestamp = self.timestamp

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "id": id,
                "previous_attributes": previous_attributes,
                "timestamp": timestamp,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_out_data import EventOutData
        from ..models.event_out_previous_attributes_type_0 import (
            EventOutPreviousAttributesType0,
        )

        d = dict(src_dict)
        data = EventOutData.from_dict(d.pop("data"))

        id = d.pop("id")

        def _parse_previous_attributes(
            data: object,
        ) -> EventOutPreviousAttributesType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                previous_attributes_type_0 = EventOutPreviousAttributesType0.from_dict(
                    data
                )

                return previous_attributes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventOutPreviousAttributesType0 | None, data)

        previous_attributes = _parse_previous_attributes(d.pop("previous_attributes"))

        timestamp = d.pop("timestamp")

        type_ = d.pop("type")

        event_out = cls(
            data=data,
            id=id,
            previous_attributes=previous_attributes,
            timestamp=timestamp,
            type_=type_,
        )

        event_out.additional_properties = d
        return event_out

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
