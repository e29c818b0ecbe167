"""Schemathesis over every /v1 operation of a live ``hookline serve`` (bounded for CI).

The longer run is ``scripts/fuzz.sh N`` (``make fuzz``); both use tests/api/fuzz.py.
"""

from __future__ import annotations

import pytest

from tests.api.fuzz import run_fuzz

CI_EXAMPLES = 3


# 46 s on 2 quiet cores (41 s of CPU, schemathesis and the server together); minutes when
# the machine is busy, hence the longer timeout.
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fuzz_finds_no_server_errors_and_no_schema_violations() -> None:
    result, logs = run_fuzz(CI_EXAMPLES)
    report = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, report
    assert " passed" in result.stdout, report
    assert "Tested: 0" not in result.stdout, report
    assert "Skipped:" not in result.stdout.split("Test Phases")[0], report  # every operation
    # A crash is a 500 to the client and an "unhandled" line in the server's log.
    assert '"level":"error"' not in logs, logs[-4000:]
