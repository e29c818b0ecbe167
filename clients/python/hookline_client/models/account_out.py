from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AccountOut")


@_attrs_define
class AccountOut:
    """
    Attributes:
        created_at (str):
        id (str):
        max_call_seconds (int):
        name (str):
        retention_days (int):
    """

    created_at: str
    id: str
    max_call_seconds: int
    name: str
    retention_days: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        max_call_seconds = self.max_call_seconds

        name = self.name

        retention_days = self.retention_days

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "max_call_seconds": max_call_seconds,
                "name": name,
                "retention_days": retention_days,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        max_call_seconds = d.pop("max_call_seconds")

        name = d.pop("name")

        retention_days = d.pop("retention_days")

        account_out = cls(
            created_at=created_at,
            id=id,
            max_call_seconds=max_call_seconds,
            name=name,
            retention_days=retention_days,
        )

        account_out.additional_properties = d
        return account_out

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
