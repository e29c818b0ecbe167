from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ContactErasedData")


@_attrs_define
class ContactErasedData:
    """
    Attributes:
        contact_id (str): The erased contact's id.
        event_ids (list[str]): The events about the contact (or its calls) this webhook received: delete what you stored
            from them. hookline has deleted them.
    """

    contact_id: str
    event_ids: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        contact_id = self.contact_id

        event_ids = self.event_ids

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "contact_id": contact_id,
                "event_ids": event_ids,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        contact_id = d.pop("contact_id")

        event_ids = cast(list[str], d.pop("event_ids"))

        contact_erased_data = cls(
            contact_id=contact_id,
            event_ids=event_ids,
        )

        contact_erased_data.additional_properties = d
        return contact_erased_data

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
