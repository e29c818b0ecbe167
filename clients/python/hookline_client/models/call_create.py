from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.call_create_call_type import CallCreateCallType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.call_create_metadata_type_0 import CallCreateMetadataType0


T = TypeVar("T", bound="CallCreate")


@_attrs_define
class CallCreate:
    """
    Attributes:
        call_type (CallCreateCallType):
        customer_phone_number (str): E.164, e.g. +15551234567
        call_started_at (datetime.datetime | None | Unset): ISO 8601 with a zone; default now.
        contact_id (None | str | Unset): The account's contact; when absent, the contact with this phone number.
        metadata (CallCreateMetadataType0 | None | Unset):
    """

    call_type: CallCreateCallType
    customer_phone_number: str
    call_started_at: datetime.datetime | None | Unset = UNSET
    contact_id: None | str | Unset = UNSET
    metadata: CallCreateMetadataType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.call_create_metadata_type_0 import CallCreateMetadataType0

        call_type = self.call_type.value

        customer_phone_number = self.customer_phone_number

        call_started_at: None | str | Unset
        if isinstance(self.call_started_at, Unset):
            call_started_at = UNSET
        elif isinstance(self.call_started_at, datetime.datetime):
            call_started_at = self.call_started_at.isoformat()
        else:
            call_started_at = self.call_started_at

        contact_id: None | str | Unset
        if isinstance(self.contact_id, Unset):
            contact_id = UNSET
        else:
            contact_id = self.contact_id

        metadata: dict[str, Any] | None | Unset
        if isinstance(self.metadata, Unset):
            metadata = UNSET
        elif isinstance(self.metadata, CallCreateMetadataType0):
            metadata = self.metadata.to_dict()
        else:
            metadata = self.metadata

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "call_type": call_type,
                "customer_phone_number": customer_phone_number,
            }
        )
        if call_started_at is not UNSET:
            field_dict["call_started_at"] = call_started_at
        if contact_id is not UNSET:
            field_dict["contact_id"] = contact_id
        if metadata is not UNSET:
            field_dict["metadata"] = metadata

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.call_create_metadata_type_0 import CallCreateMetadataType0

        d = dict(src_dict)
        call_type = CallCreateCallType(d.pop("call_type"))

        customer_phone_number = d.pop("customer_phone_number")

        def _parse_call_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                call_started_at_type_0 = datetime.datetime.fromisoformat(data)

                return call_started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        call_started_at = _parse_call_started_at(d.pop("call_started_at", UNSET))

        def _parse_contact_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        contact_id = _parse_contact_id(d.pop("contact_id", UNSET))

        def _parse_metadata(data: object) -> CallCreateMetadataType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metadata_type_0 = CallCreateMetadataType0.from_dict(data)

                return metadata_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallCreateMetadataType0 | None | Unset, data)

        metadata = _parse_metadata(d.pop("metadata", UNSET))

        call_create = cls(
            call_type=call_type,
            customer_phone_number=customer_phone_number,
            call_started_at=call_started_at,
            contact_id=contact_id,
            metadata=metadata,
        )

        return call_create
