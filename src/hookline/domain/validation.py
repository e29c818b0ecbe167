"""Normalisation of the contact fields that have rules beyond length (pure functions).

Each raises ``ValueError`` with a message a person can act on, naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable

import phonenumbers
from email_validator import EmailNotValidError, validate_email

MAX_TAGS = 50
MAX_TAG_LENGTH = 64
MAX_EMAIL_LENGTH = 254
E164_HINT = "must be E.164, e.g. +15551234567"


def normalize_phone(value: str, field: str = "phone_number") -> str:
    """An E.164 number (``+`` then country code and number), validated as a possible number."""
    candidate = value.strip()
    if not candidate.startswith("+"):
        raise ValueError(f"{field} {E164_HINT}")
    try:
        parsed = phonenumbers.parse(candidate, None)
    except phonenumbers.NumberParseException:
        raise ValueError(f"{field} {E164_HINT}") from None
    if not phonenumbers.is_possible_number(parsed):
        raise ValueError(f"{field} is not a possible phone number ({E164_HINT[5:]})")
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def normalize_email(value: str, field: str = "email") -> str:
    candidate = value.strip()
    if len(candidate) > MAX_EMAIL_LENGTH:
        raise ValueError(f"{field} must be at most {MAX_EMAIL_LENGTH} characters")
    try:
        info = validate_email(candidate, check_deliverability=False)
    except EmailNotValidError as exc:
        raise ValueError(f"{field} is not a valid email address: {exc}") from None
    return info.normalized


def normalize_tags(values: Iterable[str], field: str = "tags") -> list[str]:
    """Trimmed, duplicates dropped (first occurrence kept), order kept."""
    seen: dict[str, None] = {}
    for raw in values:
        tag = raw.strip()
        if not 1 <= len(tag) <= MAX_TAG_LENGTH:
            raise ValueError(f"each of {field} must be 1 to {MAX_TAG_LENGTH} characters")
        seen.setdefault(tag, None)
    if len(seen) > MAX_TAGS:
        raise ValueError(f"{field} may hold at most {MAX_TAGS} tags")
    return list(seen)


def trimmed(value: str, field: str, *, min_length: int, max_length: int) -> str:
    text = value.strip()
    if len(text) < min_length:
        raise ValueError(f"{field} must not be empty")
    if len(text) > max_length:
        raise ValueError(f"{field} must be at most {max_length} characters")
    return text
