from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.analysis_schema_out_schema_type_0 import AnalysisSchemaOutSchemaType0


T = TypeVar("T", bound="AnalysisSchemaOut")


@_attrs_define
class AnalysisSchemaOut:
    """
    Attributes:
        created_at (None | str):
        schema (AnalysisSchemaOutSchemaType0 | None):
        version (int | None): Starts at 1; each PUT adds one. Null: no schema.
    """

    created_at: None | str
    schema: AnalysisSchemaOutSchemaType0 | None
    version: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.analysis_schema_out_schema_type_0 import (
            AnalysisSchemaOutSchemaType0,
        )

        created_at: None | str
        created_at = self.created_at

        schema: dict[str, Any] | None
        if isinstance(self.schema, AnalysisSchemaOutSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        version: int | None
        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "schema": schema,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.analysis_schema_out_schema_type_0 import (
            AnalysisSchemaOutSchemaType0,
        )

        d = dict(src_dict)

        def _parse_created_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        created_at = _parse_created_at(d.pop("created_at"))

        def _parse_schema(data: object) -> AnalysisSchemaOutSchemaType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = AnalysisSchemaOutSchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnalysisSchemaOutSchemaType0 | None, data)

        schema = _parse_schema(d.pop("schema"))

        def _parse_version(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        version = _parse_version(d.pop("version"))

        analysis_schema_out = cls(
            created_at=created_at,
            schema=schema,
            version=version,
        )

        analysis_schema_out.additional_properties = d
        return analysis_schema_out

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
