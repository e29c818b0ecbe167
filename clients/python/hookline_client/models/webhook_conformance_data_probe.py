from enum import StrEnum


class WebhookConformanceDataProbe(StrEnum):
    BAD_SIGNATURE = "bad_signature"
    STALE_TIMESTAMP = "stale_timestamp"
    TAMPERED_BODY = "tampered_body"
    VALID = "valid"

    def __str__(self) -> str:
        return str(self.value)
