"""bench.scale's figures: --workers 2 against --workers 1, with the echo and the peer beside."""

from __future__ import annotations

import os
import socket

from bench.config import QUICK
from bench.figures import Run

from bench import scale, wrk


def _result(rps: float) -> wrk.Result:
    return wrk.Result(rps, 10.0, 20.0, 30.0, int(rps * 6), 0, 0)


def test_the_ratio_of_two_processes_is_against_one_and_each_target_is_the_issues() -> None:
    measured = {
        scale.ECHO: (_result(10_000), 80.0),
        scale.PEER: (_result(1_500), 600.0),
        scale._key("sqlite", 1): (_result(1_400), 700.0),
        scale._key("sqlite", 2): (_result(2_100), 720.0),  # 1.5x: under SQLite's 1.6x
        scale._key("postgres", 1): (_result(1_100), 900.0),
        scale._key("postgres", 2): (_result(1_650), 910.0),  # 1.5x: over PostgreSQL's 1.4x
    }
    run = Run()
    scale.report(run, QUICK, measured)
    by_name = {figure.name: figure for figure in run.figures}
    sqlite_two = by_name["POST /v1/contacts on sqlite, --workers 2"]
    assert sqlite_two.ceiling == 1_400 and sqlite_two.target == "≥ 1.6x"
    assert sqlite_two.met is False
    postgres_two = by_name["POST /v1/contacts on postgres, --workers 2"]
    assert postgres_two.ratio == 1.5 and postgres_two.met is True
    one = by_name["POST /v1/contacts on sqlite, --workers 1"]
    assert one.ceiling_name == "peer" and one.ceiling == 1_500
    assert "0.14x the echo" in one.note


def test_connections_are_counted_by_the_process_that_accepted_them() -> None:
    """The A/B mode's accept balance: established connections to the port, by owning pid."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    accepted = [listener.accept()[0] for _ in clients]
    try:
        assert scale._connections_by_process(port) == {os.getpid(): 3}
    finally:
        for sock in (*clients, *accepted, listener):
            sock.close()
