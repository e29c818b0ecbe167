"""Identifiers: time-ordered UUIDv7 everywhere, with the contract's prefixes."""

from __future__ import annotations

import os
import secrets
import time

_MILLIS = 0xFFFF_FFFF_FFFF
_VARIANT_CLEAR = ~(0xC000 << 48)
_VARIANT = 0x8000 << 48  # RFC 9562's variant, 0b10
_V4_CLEAR = ~(0xF000 << 64)
_last_millis = 0


def _uuid7_hex() -> str:
    """A UUIDv7 in 32 hex digits, made as ``uuid6.uuid7`` makes it (the millisecond, never
    earlier than the clock's and each a millisecond after the last at least, then 76 random
    bits), without building a ``uuid.UUID``: an ``evt_`` id 2.2 µs where ``uuid6.uuid7().hex``
    took 4.3 (docs/benchmarks.md, change 80)."""
    global _last_millis
    millis = time.time_ns() // 1_000_000
    if millis <= _last_millis:
        millis = _last_millis + 1
    _last_millis = millis
    value = ((millis & _MILLIS) << 80) | (7 << 76) | (secrets.randbits(76) & _VARIANT_CLEAR)
    return f"{value | _VARIANT:032x}"


def uuid7() -> str:
    spelled = _uuid7_hex()
    return f"{spelled[:8]}-{spelled[8:12]}-{spelled[12:16]}-{spelled[16:20]}-{spelled[20:]}"


def contact_id() -> str:
    return uuid7()


def webhook_id() -> str:
    return f"wh-{uuid7()}"


def call_id() -> str:
    return f"call-{uuid7()}"


def event_id() -> str:
    return f"evt_{_uuid7_hex()}"


def delivery_id() -> str:
    return f"dlv_{_uuid7_hex()}"


def account_id() -> str:
    return f"acct_{_uuid7_hex()}"


def key_id() -> str:
    return f"key_{_uuid7_hex()}"


def attempt_id() -> str:
    return f"att_{_uuid7_hex()}"


def request_id() -> str:
    # Random, not time-ordered: it is only ever looked up, never sorted.
    # A UUIDv4's 32 hex digits (uuid.uuid4().hex, without the UUID object).
    value = int.from_bytes(os.urandom(16)) & _V4_CLEAR & _VARIANT_CLEAR
    return f"req_{value | (4 << 76) | _VARIANT:032x}"


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
