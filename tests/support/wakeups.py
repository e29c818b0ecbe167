"""Counting the wake-ups a database sends its delivery workers (``on_events_committed``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hookline.storage.db import Database


@contextmanager
def wake_ups(db: Database) -> Iterator[list[None]]:
    """A list that grows by one per wake-up ``db`` sends while the block runs."""
    woken: list[None] = []

    def count() -> None:
        woken.append(None)

    db.on_events_committed(count)
    try:
        yield woken
    finally:
        db.off_events_committed(count)
