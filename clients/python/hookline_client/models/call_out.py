from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.call_out_call_status import CallOutCallStatus
from ..models.call_out_call_type import CallOutCallType

if TYPE_CHECKING:
    from ..models.call_analysis_out import CallAnalysisOut
    from ..models.call_out_metadata_type_0 import CallOutMetadataType0


T = TypeVar("T", bound="CallOut")


@_attrs_define
class CallOut:
    """
    Attributes:
        analysis (CallAnalysisOut | None):
        call_ended_at (None | str):
        call_started_at (str):
        call_status (CallOutCallStatus):
        call_type (CallOutCallType):
        contact_id (None | str):
        created_at (str):
        customer_phone_number (str):
        duration_seconds (int | None):
        id (str):
        metadata (CallOutMetadataType0 | None):
        updated_at (str):
    """

    analysis: CallAnalysisOut | None
    call_ended_at: None | str
    call_started_at: str
    call_status: CallOutCallStatus
    call_type: CallOutCallType
    contact_id: None | str
    created_at: str
    customer_phone_number: str
    duration_seconds: int | None
    id: str
    metadata: CallOutMetadataType0 | None
    updated_at: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.call_analysis_out import CallAnalysisOut
        from ..models.call_out_metadata_type_0 import CallOutMetadataType0

        analysis: dict[str, Any] | None
        if isinstance(self.analysis, CallAnalysisOut):
            analysis = self.analysis.to_dict()
        else:
            analysis = self.analysis

        call_ended_at: None | str
        call_ended_at = self.call_ended_at

        call_started_at = self.call_started_at

        call_status = self.call_status.value

        call_type = self.call_type.value

        contact_id: None | str
        contact_id = self.contact_id

        created_at = self.created_at

        customer_phone_number = self.customer_phone_number

        duration_seconds: int | None
        duration_seconds = self.duration_seconds

        id = self.id

        metadata: dict[str, Any] | None
        if isinstance(self.metadata, CallOutMetadataType0):
            metadata = self.metadata.to_dict()
        else:
            metadata = self.metadata

        updated_at = self.updated_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "analysis": analysis,
                "call_ended_at": call_ended_at,
                "call_started_at": call_started_at,
                "call_status": call_status,
                "call_type": call_type,
                "contact_id": contact_id,
                "created_at": created_at,
                "customer_phone_number": customer_phone_number,
                "duration_seconds": duration_seconds,
                "id": id,
                "metadata": metadata,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_analysis_out import CallAnalysisOut
        from ..models.call_out_metadata_type_0 import CallOutMetadataType0

        d = dict(src_dict)

        def _parse_analysis(data: object) -> CallAnalysisOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                analysis_type_0 = CallAnalysisOut.from_dict(data)

                return analysis_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallAnalysisOut | None, data)

        analysis = _parse_analysis(d.pop("analysis"))

        def _parse_call_ended_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        call_ended_at = _parse_call_ended_at(d.pop("call_ended_at"))

        call_started_at = d.pop("call_started_at")

        call_status = CallOutCallStatus(d.pop("call_status"))

        call_type = CallOutCallType(d.pop("call_type"))

        def _parse_contact_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        contact_id = _parse_contact_id(d.pop("contact_id"))

        created_at = d.pop("created_at")

        customer_phone_number = d.pop("customer_phone_number")

        def _parse_duration_seconds(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        duration_seconds = _parse_duration_seconds(d.pop("duration_seconds"))

        id = d.pop("id")

        def _parse_metadata(data: object) -> CallOutMetadataType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metadata_type_0 = CallOutMetadataType0.from_dict(data)

                return metadata_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallOutMetadataType0 | None, data)

        metadata = _parse_metadata(d.pop("metadata"))

        updated_at = d.pop("updated_at")

        call_out = cls(
            analysis=analysis,
            call_ended_at=call_ended_at,
            call_started_at=call_started_at,
            call_status=call_status,
            call_type=call_type,
            contact_id=contact_id,
            created_at=created_at,
            customer_phone_number=customer_phone_number,
            duration_seconds=duration_seconds,
            id=id,
            metadata=metadata,
            updated_at=updated_at,
        )

        call_out.additional_properties = d
        return call_out

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
