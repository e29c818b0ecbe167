"""The benchmark harness keeps working: its pieces run for a moment and produce numbers.

Timing is never asserted (the suite shares the machine); only that each piece measures something.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bench.config import QUICK
from bench.env import CONTACT_BODY, auth_headers, hookline_env, sqlite_url
from bench.figures import Figure, Run
from bench.procs import SERVER_CORE, start_hookline, start_module
from bench.report import markdown
from bench.seed import seed_account

from bench import openloop, wrk
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
