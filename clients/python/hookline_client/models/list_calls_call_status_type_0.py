from enum import StrEnum


class ListCallsCallStatusType0(StrEnum):
    BUSY = "busy"
    COMPLETED = "completed"
    FAILED = "failed"
    IN_PROGRESS = "in-progress"
    NO_ANSWER = "no-answer"

    def __str__(self) -> str:
        return str(self.value)
