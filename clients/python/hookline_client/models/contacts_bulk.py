from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.contacts_bulk_match_on import ContactsBulkMatchOn

if TYPE_CHECKING:
    from ..models.contacts_bulk_contacts_item import ContactsBulkContactsItem


T = TypeVar("T", bound="ContactsBulk")


@_attrs_define
class ContactsBulk:
    """``POST /v1/contacts/bulk``: each row is checked on its own (``bulk_row``), so a bad row
    is refused in the results and the others still apply.

        Attributes:
            contacts (list[ContactsBulkContactsItem]): Up to 1,000 objects with a contact's fields, as `POST /v1/contacts`
                takes them. A row matching an existing contact by `match_on` is merged into it as `PATCH` does (absent fields
                are kept); any other row creates a contact.
            match_on (ContactsBulkMatchOn):
    """

    contacts: list[ContactsBulkContactsItem]
    match_on: ContactsBulkMatchOn

    def to_dict(self) -> dict[str, Any]:
        contacts = []
        for contacts_item_data in self.contacts:
            contacts_item = contacts_item_data.to_dict()
            contacts.append(contacts_item)

        match_on = self.match_on.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "contacts": contacts,
                "match_on": match_on,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.contacts_bulk_contacts_item import ContactsBulkContactsItem

        d = dict(src_dict)
        contacts = []
        _contacts = d.pop("contacts")
        for contacts_item_data in _contacts:
            contacts_item = ContactsBulkContactsItem.from_dict(contacts_item_data)

            contacts.append(contacts_item)

        match_on = ContactsBulkMatchOn(d.pop("match_on"))

        contacts_bulk = cls(
            contacts=contacts,
            match_on=match_on,
        )

        return contacts_bulk
