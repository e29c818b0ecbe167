from enum import StrEnum


class BulkResultStatus(StrEnum):
    CREATED = "created"
    REFUSED = "refused"
    UNCHANGED = "unchanged"
    UPDATED = "updated"

    def __str__(self) -> str:
        return str(self.value)
