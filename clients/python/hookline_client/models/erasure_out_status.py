from enum import StrEnum


class ErasureOutStatus(StrEnum):
    DONE = "done"
    PENDING = "pending"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
