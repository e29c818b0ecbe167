"""Logging on stderr: one JSON object per line for machines, a plain line for people.

``HOOKLINE_LOG_FORMAT`` picks: ``json``, ``text``, or ``auto`` (the default: text when stderr is
a terminal, JSON otherwise, so a log collector never gets the human lines by accident).

Only the fields we put in ``extra`` are printed; request bodies, headers and query strings never
reach a log line, so keys and secrets cannot leak through logging. A path that carries a secret
(a one-time link's token) is cut before it is written (``redact_path``).

The access log (``hookline.access``, a line per request) is most of what is logged, and the
``logging`` machinery (a ``LogRecord``, the caller's frame, the handler chain) cost a POST as
much as the line itself. ``log_access`` writes it straight to the stream of the handler
``configure_logging`` installed, the same line the formatter makes of the record, as long as that
handler is the only one the record would reach; with any other handler or filter in its way
(the tests', an operator's) it goes through ``logging`` as before.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from typing import Any, Literal

import orjson

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's ANSI-coloured duplicate of the message
}
_SECOND = "%Y-%m-%dT%H:%M:%S"
LogFormat = Literal["auto", "json", "text"]
# Libraries that narrate their own start-up at INFO (Alembic's plugins and dialect): only their
# warnings are worth a reader's line.
_CHATTY_LIBRARIES = ("alembic",)

SECRET_SEGMENTS = re.compile(r"/+(?:join|reset)/", re.IGNORECASE)
"""Where a path's rest may be a secret: after a ``join`` or ``reset`` segment, the token of an
invitation or a password reset link, in any spelling a client may send (``//join/``,
``/JOIN/``): even a path no route answers may carry a valid token."""
REDACTED = "…"


def redact_path(path: str) -> str:
    """``path`` fit for a log line or a trace: whatever follows a ``join`` or ``reset``
    segment is replaced with ``REDACTED``."""
    found = SECRET_SEGMENTS.search(path)
    return path if found is None else path[: found.end()] + REDACTED


class _Seconds:
    """The ``time`` field's whole seconds, spelled once a second (``2026-11-22T15:04:05``)."""

    def __init__(self) -> None:
        self.second = -1
        self.spelled = ""

    def __call__(self, created: float) -> str:
        whole = int(created)
        if whole != self.second:
            self.spelled = time.strftime(_SECOND, time.gmtime(whole))
            self.second = whole
        return self.spelled


class LineFormatter(logging.Formatter):
    """A record as one line (plus a traceback, if any): the fields we put in ``extra``, never
    anything else of the record. ``line`` spells it; ``log_access`` calls it directly."""

    process_name: str | None = None
    """Set when ``hookline serve`` runs several processes: each line then says which one."""

    def __init__(self) -> None:
        super().__init__()
        self._seconds = _Seconds()

    def format(self, record: logging.LogRecord) -> str:
        fields = {
            key: value
            for key, value in record.__dict__.items()
            if key not in _STANDARD and not key.startswith("_")
        }
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        return self.line(
            record.created, record.levelname, record.name, record.getMessage(), record.process,
            fields,
        )  # fmt: skip

    def line(
        self,
        created: float,
        level: str,
        logger: str,
        message: str,
        pid: int | None,
        fields: dict[str, Any],
    ) -> str:
        raise NotImplementedError


class JsonFormatter(LineFormatter):
    def line(
        self,
        created: float,
        level: str,
        logger: str,
        message: str,
        pid: int | None,
        fields: dict[str, Any],
    ) -> str:
        """The JSON line: time (UTC, milliseconds), level, logger, message, then ``fields``."""
        millis = int((created - int(created)) * 1000)  # as LogRecord.msecs
        entry: dict[str, Any] = {
            "time": f"{self._seconds(created)}.{millis:03d}Z",
            "level": level.lower(),
            "logger": logger,
            "message": message,
        }
        if self.process_name is not None:
            entry["process_name"] = self.process_name
            entry["pid"] = pid
        entry.update(fields)
        return orjson.dumps(entry, default=str).decode()


ACCESS_LOGGER = "hookline.access"
# uvicorn logs its start and stop under "uvicorn.error", which reads as an error: not one.
_SHOWN_NAMES = {"uvicorn.error": "uvicorn"}
_ACCESS_FIELDS = ("method", "path", "status", "duration_ms", "request_id")


class TextFormatter(LineFormatter):
    """For a person at a terminal: local time, level, process, then the message in words.

    ``12:04:05 INFO  serve-1 hookline.delivery: delivery worker wrk_... started``; a request is
    ``12:04:05 INFO  serve-1 GET /v1/contacts 201 3.1 ms req_...``. Other fields follow as
    ``name=value``; a traceback follows on its own lines."""

    def line(
        self,
        created: float,
        level: str,
        logger: str,
        message: str,
        pid: int | None,
        fields: dict[str, Any],
    ) -> str:
        head = [time.strftime("%H:%M:%S", time.localtime(created)), f"{level.upper():<7}"]
        if self.process_name is not None:
            head.append(self.process_name)
        rest = dict(fields)
        exception = rest.pop("exception", None)
        if logger == ACCESS_LOGGER and "method" in rest:
            words = _access_words(rest)
        else:
            words = f"{_SHOWN_NAMES.get(logger, logger)}: {message}"
        extras = "".join(f" {name}={value}" for name, value in rest.items() if value is not None)
        text = " ".join(head) + " " + words + extras
        return text if exception is None else f"{text}\n{exception}"


def _access_words(fields: dict[str, Any]) -> str:
    """``GET /path 200 3.1 ms req_...``: the request's line, taking its fields out of
    ``fields``; the account id stays there only when it is set."""
    method, path, status, duration, request_id = (fields.pop(n, None) for n in _ACCESS_FIELDS)
    parts = [str(method or "-"), str(path or "-"), str(status)]
    if duration is not None:
        parts.append(f"{duration:.1f} ms" if isinstance(duration, float) else f"{duration} ms")
    if request_id is not None:
        parts.append(str(request_id))
    return " ".join(parts)


def chosen_formatter(log_format: LogFormat, stream: Any) -> LineFormatter:
    """``auto``: text for a terminal, JSON for anything else (a file, a pipe, a collector)."""
    if log_format == "auto":
        log_format = "text" if _is_terminal(stream) else "json"
    return TextFormatter() if log_format == "text" else JsonFormatter()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class _Direct:
    """``configure_logging``'s handler and formatter, for ``log_access``."""

    def __init__(self, handler: logging.StreamHandler[Any], formatter: LineFormatter) -> None:
        self.handler = handler
        self.formatter = formatter
        self.only = [handler]

    def reaches_only_ours(self, logger: logging.Logger) -> bool:
        """Whether a record of ``logger`` at INFO would reach this handler and no other, with
        no filter on the way (a logger's filters apply where the record starts; a handler's,
        at the handler)."""
        if logger.filters or logger.disabled:
            return False
        root = logging.root
        node: Any = logger
        while node is not root:
            if node.handlers or not node.propagate:
                return False
            node = node.parent
        handler = self.handler
        return root.handlers == self.only and not handler.filters and handler.level <= logging.INFO

    def write(self, logger: str, message: str, fields: dict[str, Any]) -> None:
        """What ``StreamHandler.emit`` does with the formatter's line."""
        pid = os.getpid() if logging.logProcesses else None
        text = self.formatter.line(time.time(), "INFO", logger, message, pid, fields) + "\n"
        handler = self.handler
        handler.acquire()
        try:
            handler.stream.write(text)
            handler.stream.flush()
        finally:
            handler.release()


_direct: _Direct | None = None


def log_access(logger: logging.Logger, message: str, fields: dict[str, Any]) -> None:
    """``logger.info(message, extra=fields)``, written straight to the stream when only
    ``configure_logging``'s handler would see it (the same line, without a ``LogRecord``).
    Its ``path`` field is written through ``redact_path``, whoever builds the line."""
    if not logger.isEnabledFor(logging.INFO):
        return
    path = fields.get("path")
    if isinstance(path, str) and SECRET_SEGMENTS.search(path) is not None:
        fields = {**fields, "path": redact_path(path)}
    direct = _direct
    if direct is not None and direct.reaches_only_ours(logger):
        try:
            direct.write(logger.name, message, fields)
            return
        except Exception:  # noqa: S110 - as logging would: its handler reports the failure
            pass
    logger.info(message, extra=fields)


def configure_logging(
    level: str, *, process_name: str | None = None, log_format: LogFormat = "auto"
) -> None:
    """Lines on stderr in ``log_format``; ``process_name`` (with the pid in JSON) on each when
    there are several processes."""
    global _direct
    handler = logging.StreamHandler(sys.stderr)
    formatter = chosen_formatter(log_format, sys.stderr)
    formatter.process_name = process_name
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    _direct = _Direct(handler, formatter)
    # These log SQL parameters (request values, key hashes) at DEBUG/INFO: never let them.
    for name in ("aiosqlite", "sqlalchemy.engine", "asyncpg", *_CHATTY_LIBRARIES):
        logging.getLogger(name).setLevel(logging.WARNING)
    # uvicorn's access log prints query strings; ours (hookline.access) replaces it.
    logging.getLogger("uvicorn.access").disabled = True
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
