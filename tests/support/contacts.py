"""Contact rows written straight to the table (not through the API), for storage tests."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def bare_contact(
    account_id: str, contact_id: str, created_at: datetime, updated_at: datetime | None = None
) -> dict[str, Any]:
    """Every column of a contact with only the required fields set."""
    return {
        "id": contact_id,
        "account_id": account_id,
        "first_name": "Ada",
        "last_name": None,
        "phone_number": "+15551234567",
        "email": None,
        "company": None,
        "tags": [],
        "notes": None,
        "do_not_call": False,
        "do_not_call_reason": None,
        "created_at": created_at,
        "updated_at": updated_at or created_at,
    }
