from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.disabled_webhook_payload import DisabledWebhookPayload
from ..models.disabled_webhook_signing import DisabledWebhookSigning

if TYPE_CHECKING:
    from ..models.disabled_webhook_headers import DisabledWebhookHeaders
    from ..models.mutual_tls_out import MutualTLSOut
    from ..models.o_auth_2_client_credentials_out import OAuth2ClientCredentialsOut


T = TypeVar("T", bound="DisabledWebhook")


@_attrs_define
class DisabledWebhook:
    """The webhook, masked, as the webhooks API shows it; ``disabled_reason`` says why.

    Attributes:
        auth (MutualTLSOut | None | OAuth2ClientCredentialsOut): Secrets shown as "********".
        created_at (str):
        disabled_reason (None | str):
        events (list[str]):
        filter_ (None | str):
        headers (DisabledWebhookHeaders): Names of the custom headers; values "********".
        id (str):
        is_active (bool):
        name (None | str):
        payload (DisabledWebhookPayload):
        public_key (None | str): Ed25519 webhooks: the public key (whpk_ + base64) that verifies `v1a` signatures; null
            for hmac.
        rate_limit (int | None):
        redact (list[str]):
        secret (None | str): HMAC webhooks: full only at creation, on rotation and on a switch to hmac; otherwise
            exactly whsec_********. Ed25519 webhooks: null.
        signing (DisabledWebhookSigning):
        updated_at (str):
        url (str):
    """

    auth: MutualTLSOut | None | OAuth2ClientCredentialsOut
    created_at: str
    disabled_reason: None | str
    events: list[str]
    filter_: None | str
    headers: DisabledWebhookHeaders
    id: str
    is_active: bool
    name: None | str
    payload: DisabledWebhookPayload
    public_key: None | str
    rate_limit: int | None
    redact: list[str]
    secret: None | str
    signing: DisabledWebhookSigning
    updated_at: str
    url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.mutual_tls_out import MutualTLSOut
        from ..models.o_auth_2_client_credentials_out import OAuth2ClientCredentialsOut

        auth: dict[str, Any] | None
        if isinstance(self.auth, OAuth2ClientCredentialsOut) or isinstance(
            self.auth, MutualTLSOut
        ):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

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

        payload = self.payload.value

        public_key: None | str
        public_key = self.public_key

        rate_limit: int | None
        rate_limit = self.rate_limit

        redact = self.redact

        secret: None | str
        secret = self.secret

        signing = self.signing.value

        updated_at = self.updated_at

        url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "auth": auth,
                "created_at": created_at,
                "disabled_reason": disabled_reason,
                "events": events,
                "filter": filter_,
                "headers": headers,
                "id": id,
                "is_active": is_active,
                "name": name,
                "payload": payload,
                "public_key": public_key,
                "rate_limit": rate_limit,
                "redact": redact,
                "secret": secret,
                "signing": signing,
                "updated_at": updated_at,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.disabled_webhook_headers import DisabledWebhookHeaders
        from ..models.mutual_tls_out import MutualTLSOut
        from ..models.o_auth_2_client_credentials_out import OAuth2ClientCredentialsOut

        d = dict(src_dict)

        def _parse_auth(
            data: object,
        ) -> MutualTLSOut | None | OAuth2ClientCredentialsOut:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0_type_0 = OAuth2ClientCredentialsOut.from_dict(data)

                return auth_type_0_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0_type_1 = MutualTLSOut.from_dict(data)

                return auth_type_0_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MutualTLSOut | None | OAuth2ClientCredentialsOut, data)

        auth = _parse_auth(d.pop("auth"))

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

        headers = DisabledWebhookHeaders.from_dict(d.pop("headers"))

        id = d.pop("id")

        is_active = d.pop("is_active")

        def _parse_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        name = _parse_name(d.pop("name"))

        payload = DisabledWebhookPayload(d.pop("payload"))

        def _parse_public_key(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        public_key = _parse_public_key(d.pop("public_key"))

        def _parse_rate_limit(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        rate_limit = _parse_rate_limit(d.pop("rate_limit"))

        redact = cast(list[str], d.pop("redact"))

        def _parse_secret(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        secret = _parse_secret(d.pop("secret"))

        signing = DisabledWebhookSigning(d.pop("signing"))

        updated_at = d.pop("updated_at")

        url = d.pop("url")

        disabled_webhook = cls(
            auth=auth,
            created_at=created_at,
            disabled_reason=disabled_reason,
            events=events,
            filter_=filter_,
            headers=headers,
            id=id,
            is_active=is_active,
            name=name,
            payload=payload,
            public_key=public_key,
            rate_limit=rate_limit,
            redact=redact,
            secret=secret,
            signing=signing,
            updated_at=updated_at,
            url=url,
        )

        disabled_webhook.additional_properties = d
        return disabled_webhook

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
