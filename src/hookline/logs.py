"""Structured logging: one JSON object per line on stderr.

Only the fields we put in ``extra`` are printed; request bodies, headers and query strings never
reach a log line, so keys and secrets cannot leak through logging.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import orjson

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's ANSI-coloured duplicate of the message
}


class JsonFormatter(logging.Formatter):
    process_name: str | None = None
    """Set when ``hookline serve`` runs several processes: each line then says which one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.process_name is not None:
            entry["process_name"] = self.process_name
            entry["pid"] = record.process
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def configure_logging(level: str, *, process_name: str | None = None) -> None:
    """JSON lines on stderr; ``process_name`` (with the pid) on each when there are several."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = JsonFormatter()
    formatter.process_name = process_name
    formatter.converter = __import__("time").gmtime
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # These log SQL parameters (request values, key hashes) at DEBUG/INFO: never let them.
    for name in ("aiosqlite", "sqlalchemy.engine", "asyncpg"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # uvicorn's access log prints query strings; ours (hookline.access) replaces it.
    logging.getLogger("uvicorn.access").disabled = True
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
