from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.webhook_create_events_item import WebhookCreateEventsItem
from ..models.webhook_create_payload import WebhookCreatePayload
from ..models.webhook_create_signing import WebhookCreateSigning
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mutual_tls import MutualTLS
    from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
    from ..models.webhook_create_headers_type_0 import WebhookCreateHeadersType0


T = TypeVar("T", bound="WebhookCreate")


@_attrs_define
class WebhookCreate:
    """
    Attributes:
        events (list[WebhookCreateEventsItem]): Non-empty set of event types; duplicates are dropped.
        url (str): http(s) URL (RFC 3986) of a public host, ..2048 chars
        auth (MutualTLS | None | OAuth2ClientCredentials | Unset):
        filter_ (None | str | Unset):
        headers (None | Unset | WebhookCreateHeadersType0):
        is_active (bool | Unset):  Default: True.
        name (None | str | Unset):
        payload (WebhookCreatePayload | Unset): `full`: the whole event. `thin`: only `id`, `type`, `timestamp` and
            `data: {"id", "url"}`, the object's id and its API URL, to read it as it is now. Default:
            WebhookCreatePayload.FULL.
        rate_limit (int | None | Unset):
        redact (list[str] | Unset): Fields left out of what this webhook receives: dot paths into the body under `data`,
            e.g. `"data.phone_number"`, `"data.analysis.transcript"` (up to 50, each ..200 chars). Each must be a field of
            at least one subscribed type's body (GET /v1/event-types). A changed field's old value in `previous_attributes`
            is left out too. Applied before signing.
        signing (WebhookCreateSigning | Unset): How deliveries are signed: `hmac` (`v1,` signatures with the shared
            `secret`) or `ed25519` (`v1a,` signatures the receiver verifies with `public_key`; the signing key never leaves
            hookline). Changing it starts a new key or secret; the old one keeps signing beside it for 24 hours. Default:
            WebhookCreateSigning.HMAC.
    """

    events: list[WebhookCreateEventsItem]
    url: str
    auth: MutualTLS | None | OAuth2ClientCredentials | Unset = UNSET
    filter_: None | str | Unset = UNSET
    headers: None | Unset | WebhookCreateHeadersType0 = UNSET
    is_active: bool | Unset = True
    name: None | str | Unset = UNSET
    payload: WebhookCreatePayload | Unset = WebhookCreatePayload.FULL
    rate_limit: int | None | Unset = UNSET
    redact: list[str] | Unset = UNSET
    signing: WebhookCreateSigning | Unset = WebhookCreateSigning.HMAC

    def to_dict(self) -> dict[str, Any]:
        from ..models.mutual_tls import MutualTLS
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
        from ..models.webhook_create_headers_type_0 import WebhookCreateHeadersType0

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        url = self.url

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, OAuth2ClientCredentials) or isinstance(
            self.auth, MutualTLS
        ):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        filter_: None | str | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        headers: dict[str, Any] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, WebhookCreateHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        is_active = self.is_active

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        payload: str | Unset = UNSET
        if not isinstance(self.payload, Unset):
            payload = self.payload.value

        rate_limit: int | None | Unset
        if isinstance(self.rate_limit, Unset):
            rate_limit = UNSET
        else:
            rate_limit = self.rate_limit

        redact: list[str] | Unset = UNSET
        if not isinstance(self.redact, Unset):
            redact = self.redact

        signing: str | Unset = UNSET
        if not isinstance(self.signing, Unset):
            signing = self.signing.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
                "url": url,
            }
        )
        if auth is not UNSET:
            field_dict["auth"] = auth
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if headers is not UNSET:
            field_dict["headers"] = headers
        if is_active is not UNSET:
            field_dict["is_active"] = is_active
        if name is not UNSET:
            field_dict["name"] = name
        if payload is not UNSET:
            field_dict["payload"] = payload
        if rate_limit is not UNSET:
            field_dict["rate_limit"] = rate_limit
        if redact is not UNSET:
            field_dict["redact"] = redact
        if signing is not UNSET:
            field_dict["signing"] = signing

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mutual_tls import MutualTLS
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
        from ..models.webhook_create_headers_type_0 import WebhookCreateHeadersType0

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = WebhookCreateEventsItem(events_item_data)

            events.append(events_item)

        url = d.pop("url")

        def _parse_auth(
            data: object,
        ) -> MutualTLS | None | OAuth2ClientCredentials | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0_type_0 = OAuth2ClientCredentials.from_dict(data)

                return auth_type_0_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0_type_1 = MutualTLS.from_dict(data)

                return auth_type_0_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MutualTLS | None | OAuth2ClientCredentials | Unset, data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_filter_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        def _parse_headers(data: object) -> None | Unset | WebhookCreateHeadersType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = WebhookCreateHeadersType0.from_dict(data)

                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WebhookCreateHeadersType0, data)

        headers = _parse_headers(d.pop("headers", UNSET))

        is_active = d.pop("is_active", UNSET)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        _payload = d.pop("payload", UNSET)
        payload: WebhookCreatePayload | Unset
        if isinstance(_payload, Unset):
            payload = UNSET
        else:
            payload = WebhookCreatePayload(_payload)

        def _parse_rate_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit", UNSET))

        redact = cast(list[str], d.pop("redact", UNSET))

        _signing = d.pop("signing", UNSET)
        signing: WebhookCreateSigning | Unset
        if isinstance(_signing, Unset):
            signing = UNSET
        else:
            signing = WebhookCreateSigning(_signing)

        webhook_create = cls(
            events=events,
            url=url,
            auth=auth,
            filter_=filter_,
            headers=headers,
            is_active=is_active,
            name=name,
            payload=payload,
            rate_limit=rate_limit,
            redact=redact,
            signing=signing,
        )

        return webhook_create
