from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ContactOut")


@_attrs_define
class ContactOut:
    """
    Attributes:
        company (None | str):
        created_at (str):
        do_not_call (bool):
        do_not_call_reason (None | str):
        email (None | str):
        first_name (str):
        id (str):
        last_name (None | str):
        notes (None | str):
        phone_number (str):
        tags (list[str]):
        updated_at (str):
    """

    company: None | str
    created_at: str
    do_not_call: bool
    do_not_call_reason: None | str
    email: None | str
    first_name: str
    id: str
    last_name: None | str
    notes: None | str
    phone_number: str
    tags: list[str]
    updated_at: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        company: None | str
        company = self.company

        created_at = self.created_at

        do_not_call = self.do_not_call

        do_not_call_reason: None | str
        do_not_call_reason = self.do_not_call_reason

        email: None | str
        email = self.email

        first_name = self.first_name

        id = self.id

        last_name: None | str
        last_name = self.last_name

        notes: None | str
        notes = self.notes

        phone_number = self.phone_number

        tags = self.tags

        updated_at = self.updated_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "company": company,
                "created_at": created_at,
                "do_not_call": do_not_call,
                "do_not_call_reason": do_not_call_reason,
                "email": email,
                "first_name": first_name,
                "id": id,
                "last_name": last_name,
                "notes": notes,
                "phone_number": phone_number,
                "tags": tags,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_company(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        company = _parse_company(d.pop("company"))

        created_at = d.pop("created_at")

        do_not_call = d.pop("do_not_call")

        def _parse_do_not_call_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        do_not_call_reason = _parse_do_not_call_reason(d.pop("do_not_call_reason"))

        def _parse_email(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        email = _parse_email(d.pop("email"))

        first_name = d.pop("first_name")

        id = d.pop("id")

        def _parse_last_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        last_name = _parse_last_name(d.pop("last_name"))

        def _parse_notes(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        notes = _parse_notes(d.pop("notes"))

        phone_number = d.pop("phone_number")

        tags = cast(list[str], d.pop("tags"))

        updated_at = d.pop("updated_at")

        contact_out = cls(
            company=company,
            created_at=created_at,
            do_not_call=do_not_call,
            do_not_call_reason=do_not_call_reason,
            email=email,
            first_name=first_name,
            id=id,
            last_name=last_name,
            notes=notes,
            phone_number=phone_number,
            tags=tags,
            updated_at=updated_at,
        )

        contact_out.additional_properties = d
        return contact_out

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
