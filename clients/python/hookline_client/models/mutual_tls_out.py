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

T = TypeVar("T", bound="MutualTLSOut")


@_attrs_define
class MutualTLSOut:
    """
    Attributes:
        ca (Literal['********'] | None):
        certificate (Literal['********']):
        private_key (Literal['********']):
        type_ (Literal['mtls']):
    """

    ca: Literal["********"] | None
    certificate: Literal["********"]
    private_key: Literal["********"]
    type_: Literal["mtls"]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ca: Literal["********"] | None
        ca = self.ca

        certificate = self.certificate

        private_key = self.private_key

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ca": ca,
                "certificate": certificate,
                "private_key": private_key,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_ca(data: object) -> Literal["********"] | None:
            if data is None:
                return data
            ca_type_0 = cast(Literal["********"], data)
            if ca_type_0 != "********":
                raise ValueError(
                    f"ca_type_0 must match const '********', got '{ca_type_0}'"
                )
            return ca_type_0
            return cast(Literal["********"] | None, data)

        ca = _parse_ca(d.pop("ca"))

        certificate = cast(Literal["********"], d.pop("certificate"))
        if certificate != "********":
            raise ValueError(
                f"certificate must match const '********', got '{certificate}'"
            )

        private_key = cast(Literal["********"], d.pop("private_key"))
        if private_key != "********":
            raise ValueError(
                f"private_key must match const '********', got '{private_key}'"
            )

        type_ = cast(Literal["mtls"], d.pop("type"))
        if type_ != "mtls":
            raise ValueError(f"type must match const 'mtls', got '{type_}'")

        mutual_tls_out = cls(
            ca=ca,
            certificate=certificate,
            private_key=private_key,
            type_=type_,
        )

        mutual_tls_out.additional_properties = d
        return mutual_tls_out

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
