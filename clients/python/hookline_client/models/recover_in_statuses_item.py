from enum import StrEnum


class RecoverInStatusesItem(StrEnum):
    CANCELLED = "cancelled"
    FAILED = "failed"
    MISSED = "missed"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
