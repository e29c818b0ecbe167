from enum import StrEnum


class ErasureNoticeStatus(StrEnum):
    CANCELLED = "cancelled"
    FAILED = "failed"
    NOT_SENT = "not_sent"
    PENDING = "pending"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
