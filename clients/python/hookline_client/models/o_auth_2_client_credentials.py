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

from ..types import UNSET, Unset

T = TypeVar("T", bound="OAuth2ClientCredentials")


@_attrs_define
class OAuth2ClientCredentials:
    """OAuth2 client credentials (RFC 6749 4.4): hookline fetches a token from `token_url`
    (client_secret_basic), sends it as `Authorization: Bearer`, reuses it until shortly before
    it expires, and fetches a new one once when the receiver answers 401.

        Attributes:
            client_id (str): The client's id, 1..255 chars.
            client_secret (str): 1..1024 chars. Stored encrypted; shown as "********".
            token_url (str): The token endpoint: https (unless the server allows private targets), a public address, ..2048
                chars.
            type_ (Literal['oauth2_client_credentials']):
            scope (None | str | Unset):
    """

    client_id: str
    client_secret: str
    token_url: str
    type_: Literal["oauth2_client_credentials"]
    scope: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        client_id = self.client_id

        client_secret = self.client_secret

        token_url = self.token_url

        type_ = self.type_

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "client_id": client_id,
                "client_secret": client_secret,
                "token_url": token_url,
                "type": type_,
            }
        )
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        client_id = d.pop("client_id")

        client_secret = d.pop("client_secret")

        token_url = d.pop("token_url")

        type_ = cast(Literal["oauth2_client_credentials"], d.pop("type"))
        if type_ != "oauth2_client_credentials":
            raise ValueError(
                f"type must match const 'oauth2_client_credentials', got '{type_}'"
            )

        def _parse_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        o_auth_2_client_credentials = cls(
            client_id=client_id,
            client_secret=client_secret,
            token_url=token_url,
            type_=type_,
            scope=scope,
        )

        return o_auth_2_client_credentials
