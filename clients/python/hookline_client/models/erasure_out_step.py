from enum import StrEnum


class ErasureOutStep(StrEnum):
    CALLS = "calls"
    DONE = "done"
    EVENTS = "events"
    IDEMPOTENCY = "idempotency"
    NOTIFY = "notify"

    def __str__(self) -> str:
        return str(self.value)
