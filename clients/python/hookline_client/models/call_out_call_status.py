from enum import StrEnum


class CallOutCallStatus(StrEnum):
    BUSY = "busy"
    CANCELED = "canceled"
    COMPLETED = "completed"
    FAILED = "failed"
    IN_PROGRESS = "in-progress"
    NO_ANSWER = "no-answer"
    TIMED_OUT = "timed-out"

    def __str__(self) -> str:
        return str(self.value)
