"""Memo tables with a bound: ``remember`` keeps a value, and empties a full table first.

For what is cheap to make again and keyed by what comes from outside (URLs, query strings,
hosts, days): a caller that varies the keys costs misses, never memory. Emptying rather than
evicting one entry keeps the hit path a plain ``dict.get``."""

from __future__ import annotations

from typing import TypeVar

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


def remember(table: dict[_Key, _Value], key: _Key, value: _Value, *, limit: int) -> _Value:
    """Keep ``value`` under ``key`` in ``table``, emptied first if it holds ``limit``."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value
