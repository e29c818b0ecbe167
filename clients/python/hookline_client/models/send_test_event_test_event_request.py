from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.send_test_event_test_event_request_event_type import (
    SendTestEventTestEventRequestEventType,
)

T = TypeVar("T", bound="SendTestEventTestEventRequest")


@_attrs_define
class SendTestEventTestEventRequest:
    """
    Attributes:
        event_type (SendTestEventTestEventRequestEventType): A type of GET /v1/event-types; its example event is sent.
    """

    event_type: SendTestEventTestEventRequestEventType

    def to_dict(self) -> dict[str, Any]:
        event_type = self.event_type.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "event_type": event_type,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        event_type = SendTestEventTestEventRequestEventType(d.pop("event_type"))

        send_test_event_test_event_request = cls(
            event_type=event_type,
        )

        return send_test_event_test_event_request
