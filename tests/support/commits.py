"""Holding the SQLite group commit's COMMIT, for tests of what happens while it runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from hookline.storage import connector


@contextmanager
def sqlite_commits_held(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[threading.Event, threading.Event]]:
    """Within the block each batch's COMMIT thread stops at its start. Yields ``(at_commit,
    go)``: ``at_commit`` is set once a batch got there, ``go`` lets it (and every later one)
    commit, and is set when the block exits, so that a failing test leaves no batch waiting."""
    at_commit, go = threading.Event(), threading.Event()
    commit_and_hand_over = connector._Batch._commit_and_hand_over

    def held(batch: connector._Batch) -> None:
        at_commit.set()
        go.wait(10)
        commit_and_hand_over(batch)

    monkeypatch.setattr(connector._Batch, "_commit_and_hand_over", held)
    try:
        yield at_commit, go
    finally:
        go.set()
