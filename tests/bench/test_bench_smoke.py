"""The benchmark harness keeps working: its pieces run for a moment and produce numbers.

Timing is never asserted (the suite shares the machine); only that each piece measures something.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from bench.config import QUICK
from bench.env import CONTACT_BODY, auth_headers, hookline_env, sqlite_url
from bench.figures import Figure, Run
from bench.procs import SERVER_CORE, start_hookline, start_module
from bench.report import markdown
from bench.seed import Account, seed_account

from bench import api, openloop, wrk
from hookline.settings import Settings


@pytest.fixture(autouse=True)
def _wrk_installed() -> None:
    if shutil.which("wrk") is None:
        pytest.fail("wrk is missing: run scripts/install-system-deps.sh (make test does)")


def test_wrk_and_loadgen_measure_a_real_server(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path, "smoke")
    account = seed_account(Settings(database_url=url, secret_key="x"), "smoke", 50)
    assert len(account.sample_ids) == 50
    server = start_hookline("smoke", hookline_env(url), core=SERVER_CORE, log_dir=tmp_path)
    baseline = start_module("baseline", "bench.baseline", core=SERVER_CORE, log_dir=tmp_path)
    try:
        headers = auth_headers(account.api_key)
        posted = wrk.run(
            server.base_url,
            wrk.Request("POST", "/v1/contacts", headers, CONTACT_BODY),
            connections=4,
            seconds=1,
        )
        got = wrk.run(
            server.base_url,
            wrk.Request(
                "GET",
                "/v1/contacts",
                headers,
                paths=[f"/v1/contacts/{i}" for i in account.sample_ids],
            ),
            connections=4,
            seconds=1,
        )
        echo = wrk.run(
            baseline.base_url,
            wrk.Request("POST", "/echo", headers, CONTACT_BODY),
            connections=4,
            seconds=1,
        )
        offered = openloop.offer(
            server.base_url + "/v1/contacts", 20, 1, headers=headers, body=CONTACT_BODY
        )
    finally:
        server.stop()
        baseline.stop()
    for result in (posted, got, echo):
        assert result.requests > 0 and result.rps > 0 and result.errors == 0
        assert 0 < result.p50_ms <= result.p99_ms
    assert offered["ok"] == 20 and offered["errors"] == 0 and offered["p99_ms"] > 0


def test_report_renders_every_figure() -> None:
    run = Run(machine={"nproc": "2"}, versions={"python": "3.11"})
    run.add(
        Figure(
            "API",
            "POST /v1/contacts on sqlite",
            500.0,
            "req/s",
            10.0,
            40.0,
            "POST echo",
            1000.0,
            "≥ 0.33x",
            True,
        )
    )
    text = markdown(run, QUICK, None)
    assert (
        "| POST /v1/contacts on sqlite | 500 req/s | 10.0 | 40.0 | POST echo | 1,000 | 0.50x"
        in text
    )
    assert "| nproc | 2 |" in text


def test_unique_requests_and_the_peer_measure_real_writes(tmp_path: Path) -> None:
    """Every idempotent POST and PATCH of a run is its own write; the peer stores what it gets."""
    url = sqlite_url(tmp_path, "unique")
    account = seed_account(Settings(database_url=url, secret_key="x"), "unique", 10)
    server = start_hookline("unique", hookline_env(url), core=SERVER_CORE, log_dir=tmp_path)
    peer_db = tmp_path / "peer.db"
    peer = start_module(
        "peer", "bench.peer", "--database", str(peer_db), core=SERVER_CORE, log_dir=tmp_path
    )
    headers = auth_headers(account.api_key)
    try:
        idempotent = wrk.run(
            server.base_url,
            wrk.Request(
                "POST",
                "/v1/contacts",
                {**headers, "Idempotency-Key": f"key-{wrk.UNIQUE}"},
                CONTACT_BODY,
                unique=True,
            ),
            connections=4,
            seconds=1,
        )
        patched = wrk.run(
            server.base_url,
            wrk.Request(
                "PATCH",
                "/v1/contacts",
                headers,
                b'{"notes":"n UNIQUE"}',
                paths=[f"/v1/contacts/{i}" for i in account.sample_ids],
                unique=True,
            ),
            connections=4,
            seconds=1,
        )
        naive = wrk.run(
            peer.base_url,
            wrk.Request("POST", "/contacts", {"Content-Type": "application/json"}, CONTACT_BODY),
            connections=4,
            seconds=1,
        )
    finally:
        server.stop()
        peer.stop()
    for result in (idempotent, patched, naive):
        assert result.requests > 0 and result.errors == 0
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        contacts = db.execute("SELECT count(*) FROM contacts").fetchone()[0]
        updates = db.execute(
            "SELECT count(*) FROM events WHERE type = 'contact.updated'"
        ).fetchone()[0]
    # A replayed key would add no contact; a repeated PATCH body would fire no event. wrk counts
    # answered requests only: up to one more per connection was in flight when it stopped.
    assert idempotent.requests <= contacts - 10 <= idempotent.requests + 4
    assert patched.requests <= updates <= patched.requests + 4
    with sqlite3.connect(peer_db) as db:
        stored = db.execute("SELECT count(*) FROM contacts").fetchone()[0]
        outbox = db.execute("SELECT count(*) FROM outbox").fetchone()[0]
    assert stored == outbox
    assert naive.requests <= stored <= naive.requests + 4


def test_the_api_report_has_a_row_for_every_measured_path() -> None:
    account = Account(account_id="acct", api_key="hl_live_x", sample_ids=("c1",))
    result = wrk.Result(
        rps=100.0, p50_ms=1.0, p90_ms=2.0, p99_ms=3.0, requests=1, non2xx=0, socket_errors=0
    )
    measured = {key: (result, 100.0) for key in api.FIXED_TARGETS}
    for backend in ("sqlite", "postgres"):
        for size in ("10k", "1M"):
            for label in api.requests_for(account):
                measured[f"{backend} {size} {label}"] = (result, 100.0)
    run = Run()
    api.report(run, QUICK, measured)
    names = {figure.name for figure in run.figures}
    for label in api.requests_for(account):
        assert f"{label} on sqlite" in names and f"{label} on postgres" in names
    assert "POST /v1/contacts on sqlite" in names
    peer_rows = [f for f in run.figures if f.section.startswith("Against the peer")]
    assert len(peer_rows) == 2 and all(f.met is False for f in peer_rows)  # 1.0x < 1.5x
