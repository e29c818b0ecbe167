from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.webhook_out_headers import WebhookOutHeaders


T = TypeVar("T", bound="WebhookOut")


@_attrs_define
class WebhookOut:
    """
    Attributes:
        created_at (str):
        disabled_reason (None | str):
        events (list[str]):
        filter_ (None | str):
        headers (WebhookOutHeaders): Names of the custom headers; values "********".
        id (str):
        is_active (bool):
        name (None | str):
        rate_limit (int | None):
        secret (str): Full only at creation; otherwise exactly whsec_********.
        updated_at (str):
        url (str):
    """

    created_at: str
    disabled_reason: None | str
    events: list[str]
    filter_: None | str
    headers: WebhookOutHeaders
    id: str
    is_active: bool
    name: None | str
    rate_limit: int | None
    secret: str
    updated_at: str
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        disabled_reason: None | str
        disabled_reason = self.disabled_reason

        events = self.events

        filter_: None | str
        filter_ = self.filter_

        headers = self.headers.to_dict()

        id = self.id

        is_active = self.is_active

        name: None | str
        name = self.name

        rate_limit: int | None
        rate_limit = self.rate_limit

        secret = self.secret

        updated_at = self.updated_at

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "disabled_reason": disabled_reason,
                "events": events,
                "filter": filter_,
                "headers": headers,
                "id": id,
                "is_active": is_active,
                "name": name,
                "rate_limit": rate_limit,
                "secret": secret,
                "updated_at": updated_at,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.webhook_out_headers import WebhookOutHeaders

        d = dict(src_dict)
        created_at = d.pop("created_at")

        def _parse_disabled_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        disabled_reason = _parse_disabled_reason(d.pop("disabled_reason"))

        events = cast(list[str], d.pop("events"))

        def _parse_filter_(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        filter_ = _parse_filter_(d.pop("filter"))

        headers = WebhookOutHeaders.from_dict(d.pop("headers"))

        id = d.pop("id")

        is_active = d.pop("is_active")

        def _parse_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        name = _parse_name(d.pop("name"))

        def _parse_rate_limit(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit"))

        secret = d.pop("secret")

        updated_at = d.pop("updated_at")

        url = d.pop("url")

        webhook_out = cls(
            created_at=created_at,
            disabled_reason=disabled_reason,
            events=events,
            filter_=filter_,
            headers=headers,
            id=id,
            is_active=is_active,
            name=name,
            rate_limit=rate_limit,
            secret=secret,
            updated_at=updated_at,
            url=url,
        )

        webhook_out.additional_properties = d
        return webhook_out

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
