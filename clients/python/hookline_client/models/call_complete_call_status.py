from enum import StrEnum


class CallCompleteCallStatus(StrEnum):
    BUSY = "busy"
    CANCELED = "canceled"
    COMPLETED = "completed"
    FAILED = "failed"
    NO_ANSWER = "no-answer"

    def __str__(self) -> str:
        return str(self.value)
