"""``caches.remember``: a memo table that empties itself when full, so keys from outside cost
misses, never memory."""

from __future__ import annotations

from hookline.caches import remember


def test_remember_keeps_and_returns_the_value() -> None:
    table: dict[str, int] = {}
    assert remember(table, "a", 1, limit=3) == 1
    assert remember(table, "b", 2, limit=3) == 2
    assert table == {"a": 1, "b": 2}


def test_a_full_table_is_emptied_before_the_next_value() -> None:
    table: dict[int, int] = {}
    for key in range(3):
        remember(table, key, key, limit=3)
    assert len(table) == 3
    remember(table, 99, 99, limit=3)
    assert table == {99: 99}
    for key in range(1000):
        remember(table, key, key, limit=3)
        assert len(table) <= 3
