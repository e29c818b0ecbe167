from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.webhook_conformance_data_probe import WebhookConformanceDataProbe

T = TypeVar("T", bound="WebhookConformanceData")


@_attrs_define
class WebhookConformanceData:
    """
    Attributes:
        message (str):
        probe (WebhookConformanceDataProbe): Which check of the receiver this request is.
        webhook_id (str):
    """

    message: str
    probe: WebhookConformanceDataProbe
    webhook_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        probe = self.probe.value

        webhook_id = self.webhook_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "probe": probe,
                "webhook_id": webhook_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message = d.pop("message")

        probe = WebhookConformanceDataProbe(d.pop("probe"))

        webhook_id = d.pop("webhook_id")

        webhook_conformance_data = cls(
            message=message,
            probe=probe,
            webhook_id=webhook_id,
        )

        webhook_conformance_data.additional_properties = d
        return webhook_conformance_data

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
