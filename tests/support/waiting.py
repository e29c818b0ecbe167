"""Waiting on a condition that only shows through polling (e.g. a row another process writes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    until: Callable[[T], object] = bool,
    *,
    within: float = 10.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """Call ``probe`` until ``until(result)`` holds (by default: until the result is truthy);
    fail at the deadline naming ``what`` and the last result. The one waiting helper of the
    tests: for what has no push (a row another process or the worker writes)."""
    deadline = time.monotonic() + within
    while True:
        result = await probe()
        if until(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {within}s; last: {result!r}")
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
