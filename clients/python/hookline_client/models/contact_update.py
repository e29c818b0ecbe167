from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ContactUpdate")


@_attrs_define
class ContactUpdate:
    """JSON merge-patch: absent fields are kept, ``null`` clears an optional field.

    Attributes:
        company (None | str | Unset):
        do_not_call (bool | Unset):
        do_not_call_reason (None | str | Unset):
        email (None | str | Unset):
        first_name (str | Unset):
        last_name (None | str | Unset):
        notes (None | str | Unset):
        phone_number (str | Unset): E.164, e.g. +15551234567
        tags (list[str] | None | Unset):
    """

    company: None | str | Unset = UNSET
    do_not_call: bool | Unset = UNSET
    do_not_call_reason: None | str | Unset = UNSET
    email: None | str | Unset = UNSET
    first_name: str | Unset = UNSET
    last_name: None | str | Unset = UNSET
    notes: None | str | Unset = UNSET
    phone_number: str | Unset = UNSET
    tags: list[str] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        company: None | str | Unset
        if isinstance(self.company, Unset):
            company = UNSET
        else:
            company = self.company

        do_not_call = self.do_not_call

        do_not_call_reason: None | str | Unset
        if isinstance(self.do_not_call_reason, Unset):
            do_not_call_reason = UNSET
        else:
            do_not_call_reason = self.do_not_call_reason

        email: None | str | Unset
        if isinstance(self.email, Unset):
            email = UNSET
        else:
            email = self.email

        first_name = self.first_name

        last_name: None | str | Unset
        if isinstance(self.last_name, Unset):
            last_name = UNSET
        else:
            last_name = self.last_name

        notes: None | str | Unset
        if isinstance(self.notes, Unset):
            notes = UNSET
        else:
            notes = self.notes

        phone_number = self.phone_number

        tags: list[str] | None | Unset
        if isinstance(self.tags, Unset):
            tags = UNSET
        elif isinstance(self.tags, list):
            tags = self.tags

        else:
            tags = self.tags

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if company is not UNSET:
            field_dict["company"] = company
        if do_not_call is not UNSET:
            field_dict["do_not_call"] = do_not_call
        if do_not_call_reason is not UNSET:
            field_dict["do_not_call_reason"] = do_not_call_reason
        if email is not UNSET:
            field_dict["email"] = email
        if first_name is not UNSET:
            field_dict["first_name"] = first_name
        if last_name is not UNSET:
            field_dict["last_name"] = last_name
        if notes is not UNSET:
            field_dict["notes"] = notes
        if phone_number is not UNSET:
            field_dict["phone_number"] = phone_number
        if tags is not UNSET:
            field_dict["tags"] = tags

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_company(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        company = _parse_company(d.pop("company", UNSET))

        do_not_call = d.pop("do_not_call", UNSET)

        def _parse_do_not_call_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        do_not_call_reason = _parse_do_not_call_reason(
            d.pop("do_not_call_reason", UNSET)
        )

        def _parse_email(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        email = _parse_email(d.pop("email", UNSET))

        first_name = d.pop("first_name", UNSET)

        def _parse_last_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_name = _parse_last_name(d.pop("last_name", UNSET))

        def _parse_notes(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        notes = _parse_notes(d.pop("notes", UNSET))

        phone_number = d.pop("phone_number", UNSET)

        def _parse_tags(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tags_type_0 = cast(list[str], data)

                return tags_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        tags = _parse_tags(d.pop("tags", UNSET))

        contact_update = cls(
            company=company,
            do_not_call=do_not_call,
            do_not_call_reason=do_not_call_reason,
            email=email,
            first_name=first_name,
            last_name=last_name,
            notes=notes,
            phone_number=phone_number,
            tags=tags,
        )

        return contact_update
