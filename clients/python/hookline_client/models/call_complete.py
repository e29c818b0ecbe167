from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.call_complete_call_status import CallCompleteCallStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.call_analysis import CallAnalysis


T = TypeVar("T", bound="CallComplete")


@_attrs_define
class CallComplete:
    """
    Attributes:
        call_status (CallCompleteCallStatus):
        analysis (CallAnalysis | None | Unset): The call's outcome. `lead_qualification: qualified` also fires
            `lead.qualified`, `appointment_booked: true` also fires `appointment.booked`.
        call_ended_at (datetime.datetime | None | Unset): ISO 8601 with a zone, not before call_started_at and at most 7
            days after it; default now.
    """

    call_status: CallCompleteCallStatus
    analysis: CallAnalysis | None | Unset = UNSET
    call_ended_at: datetime.datetime | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.call_analysis import CallAnalysis

        call_status = self.call_status.value

        analysis: dict[str, Any] | None | Unset
        if isinstance(self.analysis, Unset):
            analysis = UNSET
        elif isinstance(self.analysis, CallAnalysis):
            analysis = self.analysis.to_dict()
        else:
            analysis = self.analysis

        call_ended_at: None | str | Unset
        if isinstance(self.call_ended_at, Unset):
            call_ended_at = UNSET
        elif isinstance(self.call_ended_at, datetime.datetime):
            call_ended_at = self.call_ended_at.isoformat()
        else:
            call_ended_at = self.call_ended_at

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "call_status": call_status,
            }
        )
        if analysis is not UNSET:
            field_dict["analysis"] = analysis
        if call_ended_at is not UNSET:
            field_dict["call_ended_at"] = call_ended_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_analysis import CallAnalysis

        d = dict(src_dict)
        call_status = CallCompleteCallStatus(d.pop("call_status"))

        def _parse_analysis(data: object) -> CallAnalysis | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                analysis_type_0 = CallAnalysis.from_dict(data)

                return analysis_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallAnalysis | None | Unset, data)

        analysis = _parse_analysis(d.pop("analysis", UNSET))

        def _parse_call_ended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                call_ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return call_ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        call_ended_at = _parse_call_ended_at(d.pop("call_ended_at", UNSET))

        call_complete = cls(
            call_status=call_status,
            analysis=analysis,
            call_ended_at=call_ended_at,
        )

        return call_complete
