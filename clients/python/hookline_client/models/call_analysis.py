from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.call_analysis_lead_qualification_type_0 import (
    CallAnalysisLeadQualificationType0,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.call_analysis_outcome_type_0 import CallAnalysisOutcomeType0


T = TypeVar("T", bound="CallAnalysis")


@_attrs_define
class CallAnalysis:
    """What the calling product concluded about a call; every field optional.

    Attributes:
        appointment_booked (bool | None | Unset):
        assistant_id (None | str | Unset): The assistant (agent) that handled the call, ..200 chars.
        cost (None | str | Unset):
        intent (None | str | Unset):
        lead_qualification (CallAnalysisLeadQualificationType0 | None | Unset):
        outcome (CallAnalysisOutcomeType0 | None | Unset): The structured outcome, validated against the account's call
            analysis schema; fires `call.analyzed` after `call.completed`.
        recording_url (None | str | Unset):
        summary (None | str | Unset):
        transcript (None | str | Unset):
    """

    appointment_booked: bool | None | Unset = UNSET
    assistant_id: None | str | Unset = UNSET
    cost: None | str | Unset = UNSET
    intent: None | str | Unset = UNSET
    lead_qualification: CallAnalysisLeadQualificationType0 | None | Unset = UNSET
    outcome: CallAnalysisOutcomeType0 | None | Unset = UNSET
    recording_url: None | str | Unset = UNSET
    summary: None | str | Unset = UNSET
    transcript: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.call_analysis_outcome_type_0 import CallAnalysisOutcomeType0

        appointment_booked: bool | None | Unset
        if isinstance(self.appointment_booked, Unset):
            appointment_booked = UNSET
        else:
            appointment_booked = self.appointment_booked

        assistant_id: None | str | Unset
        if isinstance(self.assistant_id, Unset):
            assistant_id = UNSET
        else:
            assistant_id = self.assistant_id

        cost: None | str | Unset
        if isinstance(self.cost, Unset):
            cost = UNSET
        else:
            cost = self.cost

        intent: None | str | Unset
        if isinstance(self.intent, Unset):
            intent = UNSET
        else:
            intent = self.intent

        lead_qualification: None | str | Unset
        if isinstance(self.lead_qualification, Unset):
            lead_qualification = UNSET
        elif isinstance(self.lead_qualification, CallAnalysisLeadQualificationType0):
            lead_qualification = self.lead_qualification.value
        else:
            lead_qualification = self.lead_qualification

        outcome: dict[str, Any] | None | Unset
        if isinstance(self.outcome, Unset):
            outcome = UNSET
        elif isinstance(self.outcome, CallAnalysisOutcomeType0):
            outcome = self.outcome.to_dict()
        else:
            outcome = self.outcome

        recording_url: None | str | Unset
        if isinstance(self.recording_url, Unset):
            recording_url = UNSET
        else:
            recording_url = self.recording_url

        summary: None | str | Unset
        if isinstance(self.summary, Unset):
            summary = UNSET
        else:
            summary = self.summary

        transcript: None | str | Unset
        if isinstance(self.transcript, Unset):
            transcript = UNSET
        else:
            transcript = self.transcript

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if appointment_booked is not UNSET:
            field_dict["appointment_booked"] = appointment_booked
        if assistant_id is not UNSET:
            field_dict["assistant_id"] = assistant_id
        if cost is not UNSET:
            field_dict["cost"] = cost
        if intent is not UNSET:
            field_dict["intent"] = intent
        if lead_qualification is not UNSET:
            field_dict["lead_qualification"] = lead_qualification
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if recording_url is not UNSET:
            field_dict["recording_url"] = recording_url
        if summary is not UNSET:
            field_dict["summary"] = summary
        if transcript is not UNSET:
            field_dict["transcript"] = transcript

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_analysis_outcome_type_0 import CallAnalysisOutcomeType0

        d = dict(src_dict)

        def _parse_appointment_booked(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        appointment_booked = _parse_appointment_booked(
            d.pop("appointment_booked", UNSET)
        )

        def _parse_assistant_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        assistant_id = _parse_assistant_id(d.pop("assistant_id", UNSET))

        def _parse_cost(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cost = _parse_cost(d.pop("cost", UNSET))

        def _parse_intent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        intent = _parse_intent(d.pop("intent", UNSET))

        def _parse_lead_qualification(
            data: object,
        ) -> CallAnalysisLeadQualificationType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lead_qualification_type_0 = CallAnalysisLeadQualificationType0(data)

                return lead_qualification_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallAnalysisLeadQualificationType0 | None | Unset, data)

        lead_qualification = _parse_lead_qualification(
            d.pop("lead_qualification", UNSET)
        )

        def _parse_outcome(data: object) -> CallAnalysisOutcomeType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                outcome_type_0 = CallAnalysisOutcomeType0.from_dict(data)

                return outcome_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallAnalysisOutcomeType0 | None | Unset, data)

        outcome = _parse_outcome(d.pop("outcome", UNSET))

        def _parse_recording_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        recording_url = _parse_recording_url(d.pop("recording_url", UNSET))

        def _parse_summary(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        summary = _parse_summary(d.pop("summary", UNSET))

        def _parse_transcript(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        transcript = _parse_transcript(d.pop("transcript", UNSET))

        call_analysis = cls(
            appointment_booked=appointment_booked,
            assistant_id=assistant_id,
            cost=cost,
            intent=intent,
            lead_qualification=lead_qualification,
            outcome=outcome,
            recording_url=recording_url,
            summary=summary,
            transcript=transcript,
        )

        return call_analysis
