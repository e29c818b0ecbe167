from enum import StrEnum


class DisabledWebhookPayload(StrEnum):
    FULL = "full"
    THIN = "thin"

    def __str__(self) -> str:
        return str(self.value)
