"""Pacing for long background work that shares the event loop and the writer (SQLite has one)
with the API's requests: the bulk upsert of contacts and the retention sweep."""

from __future__ import annotations

import asyncio
import time

STEP_SECONDS = 0.002
"""How long a step of paced work may run before it lets the other requests run."""

REST_PER_STEP = 3
"""How many times as long as its step paced work rests, unless it says otherwise."""


class Pace:
    """Work in steps of about ``STEP_SECONDS``, each followed by a rest longer than the step, in
    which the other requests run whatever each of their own steps takes (a mere yield would let
    the work run a step between every two of theirs)."""

    def __init__(self, rest_per_step: float = REST_PER_STEP) -> None:
        self._rest_per_step = rest_per_step
        self._started = time.perf_counter()

    def spent(self) -> bool:
        """Whether the current step has had its time."""
        return time.perf_counter() - self._started >= STEP_SECONDS

    async def rest(self) -> None:
        """End the current step: rest ``rest_per_step`` times as long as it took."""
        await asyncio.sleep(self._rest_per_step * (time.perf_counter() - self._started))
        self._started = time.perf_counter()

    async def rest_if_spent(self) -> None:
        if self.spent():
            await self.rest()
