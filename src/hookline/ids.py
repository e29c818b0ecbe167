"""Identifiers: time-ordered UUIDv7 everywhere, with the contract's prefixes."""

from __future__ import annotations

import os
import secrets
import time

_MILLIS = 0xFFFF_FFFF_FFFF
_COUNTER_MAX = 0xFFF  # rand_a: 12 bits
_VARIANT_CLEAR = ~(0xC000 << 48)
_VARIANT = 0x8000 << 48  # RFC 9562's variant, 0b10
_V4_CLEAR = ~(0xF000 << 64)
_last_millis = 0
_counter = 0
_clock_ns = time.time_ns  # a seam: tests stop the clock


def _uuid7_hex() -> str:
    """A UUIDv7 in 32 hex digits: the millisecond, never earlier than the clock's, then a
    12-bit counter (RFC 9562, 6.2, method 1) and 62 random bits, without building a
    ``uuid.UUID`` (every write makes ids, so they are made the cheap way).

    Ids made in one millisecond count up in ``rand_a`` from a random start below half its
    range, so a process's ids are in order and stay within a millisecond of the clock. uuid6's
    rule instead moved each id a millisecond after the one before: at 3,000 ids a second the
    ids ran two seconds ahead of the clock for every second of load. Only past 2,048-4,096 ids
    in one millisecond (or a clock that steps back) is the next millisecond borrowed.
    """
    global _last_millis, _counter
    millis = _clock_ns() // 1_000_000
    if millis > _last_millis:
        _last_millis, _counter = millis, secrets.randbits(11)
    elif _counter < _COUNTER_MAX:
        _counter += 1
    else:
        _last_millis, _counter = _last_millis + 1, 0
    value = (
        ((_last_millis & _MILLIS) << 80)
        | (7 << 76)
        | (_counter << 64)
        | (secrets.randbits(62) | _VARIANT)
    )
    return f"{value:032x}"


def uuid7() -> str:
    spelled = _uuid7_hex()
    return f"{spelled[:8]}-{spelled[8:12]}-{spelled[12:16]}-{spelled[16:20]}-{spelled[20:]}"


def contact_id() -> str:
    return uuid7()


def webhook_id() -> str:
    return f"wh-{uuid7()}"


def call_id() -> str:
    return f"call-{uuid7()}"


def erasure_id() -> str:
    return f"er_{_uuid7_hex()}"


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
    "erasure_id": f"^er_{_HEX}$",
}
#: Ids of resources not listed above: at least they are ASCII words.
ANY_ID_PATTERN = "^[A-Za-z0-9_-]{1,100}$"


def pattern_of(parameter: str) -> str:
    return ID_PATTERNS.get(parameter, ANY_ID_PATTERN)
