from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.bulk_error_details_type_0 import BulkErrorDetailsType0


T = TypeVar("T", bound="BulkError")


@_attrs_define
class BulkError:
    """
    Attributes:
        code (str):
        details (BulkErrorDetailsType0 | None):
        message (str):
    """

    code: str
    details: BulkErrorDetailsType0 | None
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.bulk_error_details_type_0 import BulkErrorDetailsType0

        code = self.code

        details: dict[str, Any] | None
        if isinstance(self.details, BulkErrorDetailsType0):
            details = self.details.to_dict()
        else:
            details = self.details

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "details": details,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.bulk_error_details_type_0 import BulkErrorDetailsType0

        d = dict(src_dict)
        code = d.pop("code")

        def _parse_details(data: object) -> BulkErrorDetailsType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                details_type_0 = BulkErrorDetailsType0.from_dict(data)

                return details_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BulkErrorDetailsType0 | None, data)

        details = _parse_details(d.pop("details"))

        message = d.pop("message")

        bulk_error = cls(
            code=code,
            details=details,
            message=message,
        )

        bulk_error.additional_properties = d
        return bulk_error

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
