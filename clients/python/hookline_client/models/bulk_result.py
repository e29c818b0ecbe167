from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.bulk_result_status import BulkResultStatus

if TYPE_CHECKING:
    from ..models.bulk_error import BulkError


T = TypeVar("T", bound="BulkResult")


@_attrs_define
class BulkResult:
    """
    Attributes:
        error (BulkError | None): Why the row was refused, as the error body words it (details.fields).
        id (None | str): The contact's id; null when refused.
        index (int):
        status (BulkResultStatus):
    """

    error: BulkError | None
    id: None | str
    index: int
    status: BulkResultStatus
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.bulk_error import BulkError

        error: dict[str, Any] | None
        if isinstance(self.error, BulkError):
            error = self.error.to_dict()
        else:
            error = self.error

        id: None | str
        id = self.id

        index = self.index

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "error": error,
                "id": id,
                "index": index,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.bulk_error import BulkError

        d = dict(src_dict)

        def _parse_error(data: object) -> BulkError | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = BulkError.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BulkError | None, data)

        error = _parse_error(d.pop("error"))

        def _parse_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        id = _parse_id(d.pop("id"))

        index = d.pop("index")

        status = BulkResultStatus(d.pop("status"))

        bulk_result = cls(
            error=error,
            id=id,
            index=index,
            status=status,
        )

        bulk_result.additional_properties = d
        return bulk_result

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
