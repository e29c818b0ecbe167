from enum import StrEnum


class WebhookUpdatePayload(StrEnum):
    FULL = "full"
    THIN = "thin"

    def __str__(self) -> str:
        return str(self.value)
