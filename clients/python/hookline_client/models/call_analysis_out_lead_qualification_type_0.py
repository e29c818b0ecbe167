from enum import StrEnum


class CallAnalysisOutLeadQualificationType0(StrEnum):
    QUALIFIED = "qualified"
    UNKNOWN = "unknown"
    UNQUALIFIED = "unqualified"

    def __str__(self) -> str:
        return str(self.value)
