"""Identifiers: time-ordered UUIDv7 everywhere, with the contract's prefixes."""

from __future__ import annotations

import uuid

import uuid6


def uuid7() -> str:
    return str(uuid6.uuid7())


def contact_id() -> str:
    return uuid7()


def webhook_id() -> str:
    return f"wh-{uuid7()}"


def call_id() -> str:
    return f"call-{uuid7()}"


def event_id() -> str:
    return f"evt_{uuid6.uuid7().hex}"


def delivery_id() -> str:
    return f"dlv_{uuid6.uuid7().hex}"


def account_id() -> str:
    return f"acct_{uuid6.uuid7().hex}"


def key_id() -> str:
    return f"key_{uuid6.uuid7().hex}"


def attempt_id() -> str:
    return f"att_{uuid6.uuid7().hex}"


def request_id() -> str:
    # Random, not time-ordered: it is only ever looked up, never sorted.
    return f"req_{uuid.uuid4().hex}"


_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_HEX = "[0-9a-f]{32}"
#: What each path parameter's id looks like; anything else cannot name a resource (a 404).
ID_PATTERNS = {
    "contact_id": f"^{_UUID}$",
    "webhook_id": f"^wh-{_UUID}$",
    "call_id": f"^call-{_UUID}$",
    "event_id": f"^evt_{_HEX}$",
    "delivery_id": f"^dlv_{_HEX}$",
}
#: Ids of resources not listed above: at least they are ASCII words.
ANY_ID_PATTERN = "^[A-Za-z0-9_-]{1,100}$"


def pattern_of(parameter: str) -> str:
    return ID_PATTERNS.get(parameter, ANY_ID_PATTERN)
