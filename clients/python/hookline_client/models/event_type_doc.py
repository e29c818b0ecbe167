from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.event_type_doc_schema import EventTypeDocSchema
    from ..models.event_type_doc_thin_schema import EventTypeDocThinSchema


T = TypeVar("T", bound="EventTypeDoc")


@_attrs_define
class EventTypeDoc:
    """
    Attributes:
        description (str):
        schema (EventTypeDocSchema): JSON Schema 2020-12 of the whole delivered body.
        thin_schema (EventTypeDocThinSchema): JSON Schema 2020-12 of the body a webhook with `payload: "thin"` receives.
        type_ (str):
    """

    description: str
    schema: EventTypeDocSchema
    thin_schema: EventTypeDocThinSchema
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        schema = self.schema.to_dict()

        thin_schema = self.thin_schema.to_dict()

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "description": description,
                "schema": schema,
                "thin_schema": thin_schema,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_type_doc_schema import EventTypeDocSchema
        from ..models.event_type_doc_thin_schema import EventTypeDocThinSchema

        d = dict(src_dict)
        description = d.pop("description")

        schema = EventTypeDocSchema.from_dict(d.pop("schema"))

        thin_schema = EventTypeDocThinSchema.from_dict(d.pop("thin_schema"))

        type_ = d.pop("type")

        event_type_doc = cls(
            description=description,
            schema=schema,
            thin_schema=thin_schema,
            type_=type_,
        )

        event_type_doc.additional_properties = d
        return event_type_doc

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
