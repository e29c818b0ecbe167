from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.contact_out import ContactOut
    from ..models.contact_updated_event_previous_attributes import (
        ContactUpdatedEventPreviousAttributes,
    )


T = TypeVar("T", bound="ContactUpdatedEvent")


@_attrs_define
class ContactUpdatedEvent:
    """A contact changed; `previous_attributes` holds the changed fields' old values.

    Attributes:
        data (ContactOut):
        id (str): The `webhook-id` header; dedupe on it.
        previous_attributes (ContactUpdatedEventPreviousAttributes): The changed fields' values before the change.
        timestamp (str): When the event happened, ISO 8601 UTC.
        type_ (Literal['contact.updated']):
    """

    data: ContactOut
    id: str
    previous_attributes: ContactUpdatedEventPreviousAttributes
    timestamp: str
    type_: Literal["contact.updated"]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        id = self.id

        previous_attributes = self.previous_attributes.to_dict()

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
        from ..models.contact_out import ContactOut
        from ..models.contact_updated_event_previous_attributes import (
            ContactUpdatedEventPreviousAttributes,
        )

        d = dict(src_dict)
        data = ContactOut.from_dict(d.pop("data"))

        id = d.pop("id")

        previous_attributes = ContactUpdatedEventPreviousAttributes.from_dict(
            d.pop("previous_attributes")
        )

        timestamp = d.pop("timestamp")

        type_ = cast(Literal["contact.updated"], d.pop("type"))
        if type_ != "contact.updated":
            raise ValueError(f"type must match const 'contact.updated', got '{type_}'")

        contact_updated_event = cls(
            data=data,
            id=id,
            previous_attributes=previous_attributes,
            timestamp=timestamp,
            type_=type_,
        )

        contact_updated_event.additional_properties = d
        return contact_updated_event

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
