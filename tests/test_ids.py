"""Ids: UUIDv7 (time-ordered, never earlier than the clock) with the contract's prefixes, and
request ids as random UUIDv4 hex, all spelled as ``uuid.UUID`` spells them."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

import pytest

from hookline import ids


def _millis(value: uuid.UUID) -> int:
    return value.int >> 80


def test_a_uuid7_is_one_as_the_uuid_module_reads_and_spells_it() -> None:
    before = time.time_ns() // 1_000_000
    spelled = ids.contact_id()
    value = uuid.UUID(spelled)
    assert str(value) == spelled  # lower-case, dashed
    assert value.version == 7 and value.variant == uuid.RFC_4122
    assert _millis(value) >= before  # never earlier than the clock
    assert re.fullmatch(ids.ID_PATTERNS["contact_id"], spelled)


@pytest.mark.parametrize(
    ("make", "prefix", "parameter"),
    [
        (ids.event_id, "evt_", "event_id"),
        (ids.delivery_id, "dlv_", "delivery_id"),
        (ids.account_id, "acct_", None),
        (ids.key_id, "key_", None),
        (ids.attempt_id, "att_", None),
        (ids.webhook_id, "wh-", "webhook_id"),
        (ids.call_id, "call-", "call_id"),
    ],
)
def test_prefixed_ids_are_uuid7s(
    make: Callable[[], str], prefix: str, parameter: str | None
) -> None:
    spelled = make()
    assert spelled.startswith(prefix)
    value = uuid.UUID(spelled[len(prefix) :])
    assert value.version == 7 and value.variant == uuid.RFC_4122
    assert spelled[len(prefix) :] in (value.hex, str(value))
    if parameter is not None:
        assert re.fullmatch(ids.ID_PATTERNS[parameter], spelled)


def test_a_burst_of_ids_is_in_order_and_keeps_to_the_clock() -> None:
    """20,000 ids as fast as they come: in order, unique, and never ahead of the clock by more
    than a millisecond (a millisecond per id, uuid6's rule, put the last ~20 s ahead)."""
    burst = [ids.event_id() for _ in range(20_000)]
    after = time.time_ns() // 1_000_000
    assert sorted(burst) == burst and len(set(burst)) == len(burst)
    values = [uuid.UUID(hex=spelled[4:]) for spelled in burst]
    assert all(value.version == 7 and value.variant == uuid.RFC_4122 for value in values)
    assert _millis(values[-1]) <= after + 1


def test_past_the_counter_a_millisecond_is_borrowed_and_order_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A clock that stands still (or steps back) for 5,000 ids: the 12-bit counter runs out
    and the ids move to the next millisecond, still in order, never behind the clock."""
    frozen = (time.time_ns() // 1_000_000 + 10_000) * 1_000_000  # past the ids made so far
    # Restored afterwards, so the ids of the tests after this one keep to the real clock.
    monkeypatch.setattr(ids, "_last_millis", ids._last_millis)
    monkeypatch.setattr(ids, "_clock_ns", lambda: frozen)
    burst = [ids.event_id() for _ in range(5_000)]
    monkeypatch.setattr(ids, "_clock_ns", lambda: frozen - 5_000_000)  # five ms back
    burst += [ids.event_id() for _ in range(10)]
    assert sorted(burst) == burst and len(set(burst)) == len(burst)
    millis = {_millis(uuid.UUID(hex=spelled[4:])) for spelled in burst}
    assert min(millis) == frozen // 1_000_000
    assert 2 <= len(millis) <= 3  # 2,048-4,096 ids a millisecond, then the next one


def test_request_ids_are_random_uuid4_hex() -> None:
    spelled = [ids.request_id() for _ in range(100)]
    assert len(set(spelled)) == 100
    for one in spelled:
        assert one.startswith("req_") and len(one) == 36
        value = uuid.UUID(hex=one[4:])
        assert value.version == 4 and value.variant == uuid.RFC_4122 and value.hex == one[4:]
