from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.erasure_notice_status import ErasureNoticeStatus

T = TypeVar("T", bound="ErasureNotice")


@_attrs_define
class ErasureNotice:
    """
    Attributes:
        event_id (None | str): The contact.erased event sent to it; null: none.
        status (ErasureNoticeStatus): Its delivery's status: `succeeded` once the receiver acknowledged it; `not_sent`
            when the webhook was inactive or deleted.
        webhook_id (str):
    """

    event_id: None | str
    status: ErasureNoticeStatus
    webhook_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_id: None | str
        event_id = self.event_id

        status = self.status.value

        webhook_id = self.webhook_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_id": event_id,
                "status": status,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_event_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        event_id = _parse_event_id(d.pop("event_id"))

        status = ErasureNoticeStatus(d.pop("status"))

        webhook_id = d.pop("webhook_id")

        erasure_notice = cls(
            event_id=event_id,
            status=status,
            webhook_id=webhook_id,
        )

        erasure_notice.additional_properties = d
        return erasure_notice

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
