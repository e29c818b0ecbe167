from enum import StrEnum


class ContactsBulkMatchOn(StrEnum):
    EMAIL = "email"
    PHONE_NUMBER = "phone_number"

    def __str__(self) -> str:
        return str(self.value)
