from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.webhook_update_events_item import WebhookUpdateEventsItem
from ..models.webhook_update_payload import WebhookUpdatePayload
from ..models.webhook_update_signing import WebhookUpdateSigning
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mutual_tls import MutualTLS
    from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
    from ..models.webhook_update_headers import WebhookUpdateHeaders


T = TypeVar("T", bound="WebhookUpdate")


@_attrs_define
class WebhookUpdate:
    """Partial update: absent fields are kept; ``name``, ``filter`` and ``rate_limit`` take
    ``null`` to clear; ``headers`` merges.

        Attributes:
            auth (MutualTLS | None | OAuth2ClientCredentials | Unset): Replaces the webhook's auth (null removes it). With
                the same `type`, a secret sent as `"********"` keeps the stored one.
            events (list[WebhookUpdateEventsItem] | Unset): Non-empty set of event types; duplicates are dropped.
            filter_ (None | str | Unset):
            headers (WebhookUpdateHeaders | Unset): Merged into the current headers; a null value removes that header (also
                one stored before its name was refused). The rules of `headers` apply to each value set; a merge drops stored
                headers those rules now refuse.
            is_active (bool | Unset):
            name (None | str | Unset):
            payload (WebhookUpdatePayload | Unset): `full`: the whole event. `thin`: only `id`, `type`, `timestamp` and
                `data: {"id", "url"}`, the object's id and its API URL, to read it as it is now.
            rate_limit (int | None | Unset):
            redact (list[str] | None | Unset): Replaces the paths; null clears.
            signing (WebhookUpdateSigning | Unset): How deliveries are signed: `hmac` (`v1,` signatures with the shared
                `secret`) or `ed25519` (`v1a,` signatures the receiver verifies with `public_key`; the signing key never leaves
                hookline). Changing it starts a new key or secret; the old one keeps signing beside it for 24 hours.
            url (str | Unset): http(s) URL (RFC 3986) of a public host, ..2048 chars
    """

    auth: MutualTLS | None | OAuth2ClientCredentials | Unset = UNSET
    events: list[WebhookUpdateEventsItem] | Unset = UNSET
    filter_: None | str | Unset = UNSET
    headers: WebhookUpdateHeaders | Unset = UNSET
    is_active: bool | Unset = UNSET
    name: None | str | Unset = UNSET
    payload: WebhookUpdatePayload | Unset = UNSET
    rate_limit: int | None | Unset = UNSET
    redact: list[str] | None | Unset = UNSET
    signing: WebhookUpdateSigning | Unset = UNSET
    url: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.mutual_tls import MutualTLS
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, OAuth2ClientCredentials) or isinstance(
            self.auth, MutualTLS
        ):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        events: list[str] | Unset = UNSET
        if not isinstance(self.events, Unset):
            events = []
            for events_item_data in self.events:
                events_item = events_item_data.value
                events.append(events_item)

        filter_: None | str | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

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

        redact: list[str] | None | Unset
        if isinstance(self.redact, Unset):
            redact = UNSET
        elif isinstance(self.redact, list):
            redact = self.redact

        else:
            redact = self.redact

        signing: str | Unset = UNSET
        if not isinstance(self.signing, Unset):
            signing = self.signing.value

        url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if auth is not UNSET:
            field_dict["auth"] = auth
        if events is not UNSET:
            field_dict["events"] = events
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
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mutual_tls import MutualTLS
        from ..models.o_auth_2_client_credentials import OAuth2ClientCredentials
        from ..models.webhook_update_headers import WebhookUpdateHeaders

        d = dict(src_dict)

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

        _events = d.pop("events", UNSET)
        events: list[WebhookUpdateEventsItem] | Unset = UNSET
        if _events is not UNSET:
            events = []
            for events_item_data in _events:
                events_item = WebhookUpdateEventsItem(events_item_data)

                events.append(events_item)

        def _parse_filter_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: WebhookUpdateHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = WebhookUpdateHeaders.from_dict(_headers)

        is_active = d.pop("is_active", UNSET)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        _payload = d.pop("payload", UNSET)
        payload: WebhookUpdatePayload | Unset
        if isinstance(_payload, Unset):
            payload = UNSET
        else:
            payload = WebhookUpdatePayload(_payload)

        def _parse_rate_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit", UNSET))

        def _parse_redact(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                redact_type_0 = cast(list[str], data)

                return redact_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        redact = _parse_redact(d.pop("redact", UNSET))

        _signing = d.pop("signing", UNSET)
        signing: WebhookUpdateSigning | Unset
        if isinstance(_signing, Unset):
            signing = UNSET
        else:
            signing = WebhookUpdateSigning(_signing)

        url = d.pop("url", UNSET)

        webhook_update = cls(
            auth=auth,
            events=events,
            filter_=filter_,
            headers=headers,
            is_active=is_active,
            name=name,
            payload=payload,
            rate_limit=rate_limit,
            redact=redact,
            signing=signing,
            url=url,
        )

        return webhook_update
