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

T = TypeVar("T", bound="MutualTLS")


@_attrs_define
class MutualTLS:
    """A client certificate hookline shows in the TLS handshake (the url must be https).

    Attributes:
        certificate (str): The client's certificate (PEM, leaf first, then any intermediates); valid now and matching
            `private_key`. Stored encrypted; shown as "********".
        private_key (str): The client's private key (PEM, unencrypted). Stored encrypted; shown as "********".
        type_ (Literal['mtls']):
        ca (None | str | Unset): The CA (PEM) that signed the receiver's server certificate, trusted instead of the
            system's roots; null for the system's roots. Stored encrypted; shown as "********".
    """

    certificate: str
    private_key: str
    type_: Literal["mtls"]
    ca: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        certificate = self.certificate

        private_key = self.private_key

        type_ = self.type_

        ca: None | str | Unset
        if isinstance(self.ca, Unset):
            ca = UNSET
        else:
            ca = self.ca

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "certificate": certificate,
                "private_key": private_key,
                "type": type_,
            }
        )
        if ca is not UNSET:
            field_dict["ca"] = ca

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        certificate = d.pop("certificate")

        private_key = d.pop("private_key")

        type_ = cast(Literal["mtls"], d.pop("type"))
        if type_ != "mtls":
            raise ValueError(f"type must match const 'mtls', got '{type_}'")

        def _parse_ca(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        ca = _parse_ca(d.pop("ca", UNSET))

        mutual_tls = cls(
            certificate=certificate,
            private_key=private_key,
            type_=type_,
            ca=ca,
        )

        return mutual_tls
