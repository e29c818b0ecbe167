from enum import StrEnum


class CheckOutName(StrEnum):
    AUTH_ENFORCED = "auth_enforced"
    BAD_SIGNATURE = "bad_signature"
    DUPLICATE_ID = "duplicate_id"
    STALE_TIMESTAMP = "stale_timestamp"
    TAMPERED_BODY = "tampered_body"
    VALID = "valid"

    def __str__(self) -> str:
        return str(self.value)
