"""SQLite's write-ahead log, emptied on demand (after an erasure: docs/operations.md)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)


def truncate_wal(path: Path) -> bool:
    """Move the WAL's pages into the database file and truncate the WAL to nothing, from a
    connection of its own (call it in a thread: it waits up to a second for the writer).
    Whether it did; a busy database is left to SQLite's automatic checkpoints."""
    raw = sqlite3.connect(path, timeout=1.0)
    try:
        busy, _, _ = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy
    except sqlite3.Error as exc:
        log.info("WAL checkpoint skipped: %s", exc)
        return False
    finally:
        raw.close()
