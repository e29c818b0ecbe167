"""Waiting on a condition that only shows through polling (e.g. a row another process writes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    until: Callable[[T], bool],
    *,
    within: float = 10.0,
    interval: float = 0.02,
) -> T:
    """Call ``probe`` until ``until(result)`` holds; fail with the last result at the deadline."""
    deadline = time.monotonic() + within
    while True:
        result = await probe()
        if until(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s; last: {result!r}")
        await asyncio.sleep(interval)


def wait_until(
    check: Callable[[], T], *, within: float = 10.0, interval: float = 0.02, message: str = ""
) -> T:
    """:func:`eventually` for blocking tests: call ``check`` until it returns something truthy."""
    deadline = time.monotonic() + within
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{message or 'condition'} not met within {within}s")
        time.sleep(interval)
