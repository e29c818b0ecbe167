from enum import StrEnum


class WebhookOutPayload(StrEnum):
    FULL = "full"
    THIN = "thin"

    def __str__(self) -> str:
        return str(self.value)
