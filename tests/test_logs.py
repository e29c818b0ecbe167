"""The JSON log lines and the text ones, the access log's direct path (``logs.log_access``),
which must write exactly the line the formatter makes of a record, and only when no other handler
would see it, and what `hookline serve` says on a terminal."""

from __future__ import annotations

import calendar
import io
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from hookline import logs
from tests.conftest import TEST_SECRET_KEY
from tests.support.server import running_server
from tests.support.waiting import wait_until

_FIELDS = {
    "request_id": "req_1",
    "account_id": "acct_2",
    "method": "POST",
    "path": "/v1/contacts",
    "status": 201,
    "duration_ms": 1.25,
}
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """The root logger configured by ``configure_logging``, writing to a buffer; restored after."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logs._direct)
    out = io.StringIO()
    try:
        yield out
    finally:
        root.handlers[:], level, logs._direct = saved
        root.setLevel(level)


def _configure(out: io.StringIO, process_name: str | None = None) -> logging.StreamHandler[Any]:
    logs.configure_logging("INFO", process_name=process_name)
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)
    return handler


def _records_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    factory = logging.getLogRecordFactory()

    def counting(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        made.append(record.name)
        return record

    monkeypatch.setattr(logging, "_logRecordFactory", counting)  # setLogRecordFactory, undone
    return made


@pytest.mark.parametrize("process_name", [None, "serve-2"])
def test_the_direct_line_is_the_formatters_line_without_a_record(
    stream: io.StringIO, monkeypatch: pytest.MonkeyPatch, process_name: str | None
) -> None:
    handler = _configure(stream, process_name)
    made = _records_made(monkeypatch)
    access = logging.getLogger("hookline.access")
    before = time.time()
    logs.log_access(access, "request", dict(_FIELDS))
    direct = stream.getvalue()
    assert made == []  # written straight to the stream
    assert direct.endswith("\n") and direct.count("\n") == 1

    record = access.makeRecord(
        access.name, logging.INFO, "f", 1, "request", (), None, None, dict(_FIELDS)
    )
    formatted = handler.format(record)
    one, other = orjson.loads(direct), orjson.loads(formatted)
    assert list(one) == list(other)  # the same fields in the same order
    assert _TIME.match(one["time"]) and one.pop("time")[:10] == other.pop("time")[:10]
    assert one == other
    if process_name is None:
        assert "pid" not in one
    else:
        assert one["process_name"] == process_name and one["pid"] == record.process
    assert list(one)[:3] == ["level", "logger", "message"]
    assert one["logger"] == "hookline.access" and one["level"] == "info"
    spelled = orjson.loads(direct)["time"]
    written = calendar.timegm(time.strptime(spelled[:19], "%Y-%m-%dT%H:%M:%S"))
    assert -0.001 <= written + int(spelled[20:23]) / 1000 - before < 2  # UTC, now


def test_another_handler_or_filter_on_the_way_gets_the_record(
    stream: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = _configure(stream)
    made = _records_made(monkeypatch)
    access = logging.getLogger("hookline.access")
    seen: list[logging.LogRecord] = []
    extra = logging.Handler(logging.INFO)
    extra.emit = seen.append  # type: ignore[method-assign, assignment]
    blocked = logging.Filter("nothing.matches")
    parent, root = logging.getLogger("hookline"), logging.getLogger()
    on_the_way: list[tuple[Callable[[Any], None], Callable[[Any], None], Any]] = [
        # a handler on the logger, on its parent, on the root
        *((logger.addHandler, logger.removeHandler, extra) for logger in (access, parent, root)),
        # a filter on our handler, on the logger
        *((owner.addFilter, owner.removeFilter, blocked) for owner in (handler, access)),
    ]
    for attach, detach, thing in on_the_way:
        attach(thing)
        try:
            logs.log_access(access, "request", dict(_FIELDS))
        finally:
            detach(thing)
    assert made == ["hookline.access"] * 5  # every one through logging
    assert len(seen) == 3 and all(r.status == 201 for r in seen)  # type: ignore[attr-defined]
    # Our own handler wrote a line each time nothing filtered it out.
    assert len(stream.getvalue().splitlines()) == 3


def test_below_info_nothing_is_written(stream: io.StringIO) -> None:
    _configure(stream)
    logging.getLogger().setLevel(logging.WARNING)
    logs.log_access(logging.getLogger("hookline.access"), "request", dict(_FIELDS))
    assert stream.getvalue() == ""


def test_the_token_of_every_one_time_link_path_is_cut() -> None:
    from hookline.dashboard import links

    token = "A" * 43
    for prefix in links.PATHS.values():
        assert logs.redact_path(prefix + token) == prefix + logs.REDACTED
        assert logs.redact_path(f"{prefix}{token}/more") == prefix + logs.REDACTED
    # Spellings no route answers still carry a valid token.
    for prefix in ("/dashboard//join/", "/dashboard/JOIN/", "//dashboard/Reset/"):
        assert logs.redact_path(f"{prefix}{token}/more") == prefix + logs.REDACTED
    for kept in ("/dashboard/join", "/dashboard/team", "/v1/contacts/con_1", "/"):
        assert logs.redact_path(kept) == kept


def test_the_access_line_of_a_link_path_holds_no_token(stream: io.StringIO) -> None:
    _configure(stream)
    path = "/dashboard/reset/" + "B" * 43
    fields = {**_FIELDS, "path": path}
    logs.log_access(logging.getLogger("hookline.access"), "request", fields)
    assert '"path":"/dashboard/reset/…"' in stream.getvalue() and "B" * 43 not in stream.getvalue()
    assert fields["path"] == path  # the caller's fields are left as they were


def _configure_as(out: io.StringIO, log_format: logs.LogFormat) -> logging.StreamHandler[Any]:
    logs.configure_logging("INFO", process_name="serve-1", log_format=log_format)
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(out)
    return handler


_CLOCK = re.compile(r"^\d\d:\d\d:\d\d ")


def test_a_request_in_text_reads_method_path_status_duration_and_id(
    stream: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = _configure_as(stream, "text")
    made = _records_made(monkeypatch)
    access = logging.getLogger("hookline.access")
    logs.log_access(access, "request", dict(_FIELDS))
    direct = stream.getvalue()
    assert made == []  # the direct path holds in text too
    record = access.makeRecord(
        access.name, logging.INFO, "f", 1, "request", (), None, None, dict(_FIELDS)
    )
    assert _CLOCK.sub("", direct) == _CLOCK.sub("", handler.format(record)) + "\n"
    expected = "INFO    serve-1 POST /v1/contacts 201 1.2 ms req_1 account_id=acct_2\n"
    assert _CLOCK.match(direct) and direct[9:] == expected, direct


def test_text_lines_name_the_logger_and_add_fields_and_the_traceback(
    stream: io.StringIO,
) -> None:
    _configure_as(stream, "text")
    log = logging.getLogger("hookline.delivery")
    log.warning("webhook %s disabled", "wh_1", extra={"worker_id": "wrk_1", "nothing": None})
    try:
        raise ValueError("the reason")
    except ValueError:
        log.exception("pruning failed")
    logging.getLogger("uvicorn.error").info("Application startup complete.")
    lines = stream.getvalue().splitlines()
    assert (
        lines[0][9:] == "WARNING serve-1 hookline.delivery: webhook wh_1 disabled worker_id=wrk_1"
    )
    assert lines[1][9:] == "ERROR   serve-1 hookline.delivery: pruning failed"
    assert lines[2] == "Traceback (most recent call last):"
    assert "ValueError: the reason" in lines
    # uvicorn's lifecycle lines come from "uvicorn.error": shown as what they are, not errors.
    assert lines[-1][9:] == "INFO    serve-1 uvicorn: Application startup complete."
    assert all(not line.startswith("{") for line in lines)


def test_auto_is_text_on_a_terminal_and_json_anywhere_else(tmp_path: Path) -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal, (tmp_path / "log").open("w") as file:
        assert isinstance(logs.chosen_formatter("auto", terminal), logs.TextFormatter)
        assert isinstance(logs.chosen_formatter("auto", file), logs.JsonFormatter)
        assert isinstance(logs.chosen_formatter("json", terminal), logs.JsonFormatter)
        assert isinstance(logs.chosen_formatter("text", file), logs.TextFormatter)
    os.close(leader)


def test_libraries_say_nothing_below_a_warning(stream: io.StringIO) -> None:
    _configure_as(stream, "json")
    plugins = logging.getLogger("alembic.runtime.plugins")
    plugins.info("setup plugin alembic.autogenerate.schemas")
    logging.getLogger("alembic.runtime.migration").info("Will assume non-transactional DDL.")
    assert stream.getvalue() == ""
    plugins.warning("a real problem")
    assert orjson.loads(stream.getvalue())["message"] == "a real problem"


def test_serve_in_text_says_what_matters_and_no_process_warns_of_its_sibling(
    tmp_path: Path,
) -> None:
    """What `make run` shows on a terminal: `serve` with two processes on one SQLite file."""
    env = {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{tmp_path / 'text.db'}",
        "HOOKLINE_SECRET_KEY": TEST_SECRET_KEY,
        "HOOKLINE_LOG_FORMAT": "text",
        # Heartbeats every second, where a worker looks for others.
        "HOOKLINE_DELIVERY_LEASE_SECONDS": "3",
        "HOOKLINE_DELIVERY_TOTAL_TIMEOUT": "2",
        "HOOKLINE_DELIVERY_CONNECT_TIMEOUT": "1",
        # DEBUG, so that a worker's look at its sibling shows (as a debug line, not a warning).
        "HOOKLINE_LOG_LEVEL": "DEBUG",
    }
    with running_server(env, args=("--workers", "2")) as server:
        answer = httpx.get(server.base_url + "/healthz", headers={"X-Request-Id": "req-look"})
        assert answer.status_code == 200
        wait_until(lambda: "req-look" in server.logs(), message="the request's line")
        # Each worker sees the other: the later one at its start, the first one at a heartbeat.
        sibling = "of this serve started"
        wait_until(lambda: server.logs().count(sibling) == 2, within=60, message="both looks")
        said = server.logs()
    lines = said.splitlines()
    request = re.compile(
        r"^\d\d:\d\d:\d\d INFO    serve-[12] GET /healthz 200 \d+\.\d ms req-look$"
    )
    assert [line for line in lines if request.match(line)], said
    assert not [line for line in lines if line.startswith("{")], "a JSON line on a terminal"
    assert "alembic" not in said and "setup plugin" not in said
    assert "another delivery worker" not in said and "WARNING" not in said, said
