from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="OAuth2ClientCredentialsOut")


@_attrs_define
class OAuth2ClientCredentialsOut:
    """
    Attributes:
        client_id (str):
        client_secret (Literal['********']):
        scope (None | str):
        token_url (str):
        type_ (Literal['oauth2_client_credentials']):
    """

    client_id: str
    client_secret: Literal["********"]
    scope: None | str
    token_url: str
    type_: Literal["oauth2_client_credentials"]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        client_secret = self.client_secret

        scope: None | str
        scope = self.scope

        token_url = self.token_url

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "client_id": client_id,
                "client_secret": client_secret,
                "scope": scope,
                "token_url": token_url,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        client_id = d.pop("client_id")

        client_secret = cast(Literal["********"], d.pop("client_secret"))
        if client_secret != "********":
            raise ValueError(
                f"client_secret must match const '********', got '{client_secret}'"
            )

        def _parse_scope(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        scope = _parse_scope(d.pop("scope"))

        token_url = d.pop("token_url")

        type_ = cast(Literal["oauth2_client_credentials"], d.pop("type"))
        if type_ != "oauth2_client_credentials":
            raise ValueError(
                f"type must match const 'oauth2_client_credentials', got '{type_}'"
            )

        o_auth_2_client_credentials_out = cls(
            client_id=client_id,
            client_secret=client_secret,
            scope=scope,
            token_url=token_url,
            type_=type_,
        )

        o_auth_2_client_credentials_out.additional_properties = d
        return o_auth_2_client_credentials_out

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
