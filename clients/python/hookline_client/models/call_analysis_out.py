from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.call_analysis_out_lead_qualification_type_0 import (
    CallAnalysisOutLeadQualificationType0,
)

if TYPE_CHECKING:
    from ..models.call_analysis_out_outcome_type_0 import CallAnalysisOutOutcomeType0


T = TypeVar("T", bound="CallAnalysisOut")


@_attrs_define
class CallAnalysisOut:
    """
    Attributes:
        appointment_booked (bool | None):
        assistant_id (None | str):
        cost (None | str): A decimal string, e.g. "0.42", or null.
        intent (None | str):
        lead_qualification (CallAnalysisOutLeadQualificationType0 | None):
        outcome (CallAnalysisOutOutcomeType0 | None): The structured outcome (the account's call analysis schema), or
            null.
        outcome_schema_version (int | None): The version of the schema `outcome` was validated against; null when there
            is no outcome or the account had no schema.
        recording_url (None | str):
        summary (None | str):
        transcript (None | str):
    """

    appointment_booked: bool | None
    assistant_id: None | str
    cost: None | str
    intent: None | str
    lead_qualification: CallAnalysisOutLeadQualificationType0 | None
    outcome: CallAnalysisOutOutcomeType0 | None
    outcome_schema_version: int | None
    recording_url: None | str
    summary: None | str
    transcript: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.call_analysis_out_outcome_type_0 import (
            CallAnalysisOutOutcomeType0,
        )

        appointment_booked: bool | None
        appointment_booked = self.appointment_booked

        assistant_id: None | str
        assistant_id = self.assistant_id

        cost: None | str
        cost = self.cost

        intent: None | str
        intent = self.intent

        lead_qualification: None | str
        if isinstance(self.lead_qualification, CallAnalysisOutLeadQualificationType0):
            lead_qualification = self.lead_qualification.value
        else:
            lead_qualification = self.lead_qualification

        outcome: dict[str, Any] | None
        if isinstance(self.outcome, CallAnalysisOutOutcomeType0):
            outcome = self.outcome.to_dict()
        else:
            outcome = self.outcome

        outcome_schema_version: int | None
        outcome_schema_version = self.outcome_schema_version

        recording_url: None | str
        recording_url = self.recording_url

        summary: None | str
        summary = self.summary

        transcript: None | str
        transcript = self.transcript

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "appointment_booked": appointment_booked,
                "assistant_id": assistant_id,
                "cost": cost,
                "intent": intent,
                "lead_qualification": lead_qualification,
                "outcome": outcome,
                "outcome_schema_version": outcome_schema_version,
                "recording_url": recording_url,
                "summary": summary,
                "transcript": transcript,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_analysis_out_outcome_type_0 import (
            CallAnalysisOutOutcomeType0,
        )

        d = dict(src_dict)

        def _parse_appointment_booked(data: object) -> bool | None:
            if data is None:
                return data
            return cast(bool | None, data)

        appointment_booked = _parse_appointment_booked(d.pop("appointment_booked"))

        def _parse_assistant_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        assistant_id = _parse_assistant_id(d.pop("assistant_id"))

        def _parse_cost(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        cost = _parse_cost(d.pop("cost"))

        def _parse_intent(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        intent = _parse_intent(d.pop("intent"))

        def _parse_lead_qualification(
            data: object,
        ) -> CallAnalysisOutLeadQualificationType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lead_qualification_type_0 = CallAnalysisOutLeadQualificationType0(data)

                return lead_qualification_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallAnalysisOutLeadQualificationType0 | None, data)

        lead_qualification = _parse_lead_qualification(d.pop("lead_qualification"))

        def _parse_outcome(data: object) -> CallAnalysisOutOutcomeType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                outcome_type_0 = CallAnalysisOutOutcomeType0.from_dict(data)

                return outcome_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallAnalysisOutOutcomeType0 | None, data)

        outcome = _parse_outcome(d.pop("outcome"))

        def _parse_outcome_schema_version(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        outcome_schema_version = _parse_outcome_schema_version(
            d.pop("outcome_schema_version")
        )

        def _parse_recording_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        recording_url = _parse_recording_url(d.pop("recording_url"))

        def _parse_summary(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        summary = _parse_summary(d.pop("summary"))

        def _parse_transcript(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        transcript = _parse_transcript(d.pop("transcript"))

        call_analysis_out = cls(
            appointment_booked=appointment_booked,
            assistant_id=assistant_id,
            cost=cost,
            intent=intent,
            lead_qualification=lead_qualification,
            outcome=outcome,
            outcome_schema_version=outcome_schema_version,
            recording_url=recording_url,
            summary=summary,
            transcript=transcript,
        )

        call_analysis_out.additional_properties = d
        return call_analysis_out

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
