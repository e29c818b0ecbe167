from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="AccountUpdate")


@_attrs_define
class AccountUpdate:
    """
    Attributes:
        max_call_seconds (int | Unset): A call still in progress this long after its start is ended by the server with
            `call_status` `timed-out` (60..604800; default 3600). Applies to calls started after the change.
        retention_days (int | Unset): How long the account's data is kept, in days (1..3650; default 30).
    """

    max_call_seconds: int | Unset = UNSET
    retention_days: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_call_seconds = self.max_call_seconds

        retention_days = self.retention_days

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_call_seconds is not UNSET:
            field_dict["max_call_seconds"] = max_call_seconds
        if retention_days is not UNSET:
            field_dict["retention_days"] = retention_days

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        max_call_seconds = d.pop("max_call_seconds", UNSET)

        retention_days = d.pop("retention_days", UNSET)

        account_update = cls(
            max_call_seconds=max_call_seconds,
            retention_days=retention_days,
        )

        return account_update
