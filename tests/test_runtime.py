"""``runtime.settle_heap``: start-up objects leave the collector, young collections thin out."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from hookline import cli, logs, runtime

_PROBE = """
import gc, json
import hookline.app  # what `hookline serve` has imported by then
from hookline.runtime import YOUNG_GENERATION_THRESHOLD, settle_heap
before = gc.get_freeze_count()
settle_heap()
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(),
                  "threshold": gc.get_threshold()[0], "expected": YOUNG_GENERATION_THRESHOLD}))
"""


def test_settle_heap_freezes_start_up_objects_and_raises_the_young_threshold() -> None:
    # In a child process: freezing the test runner's own heap would outlive this test.
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    seen = json.loads(out)
    assert seen["before"] == 0
    assert seen["frozen"] > 50_000  # the imported app: modules, classes, schemas
    assert seen["threshold"] == seen["expected"] == 20_000


def test_serve_and_worker_settle_the_heap_just_before_they_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setenv("HOOKLINE_DATABASE_URL", f"sqlite:///{tmp_path / 'runtime.db'}")
    monkeypatch.setenv("HOOKLINE_WORKERS", "1")
    monkeypatch.setattr(logs, "configure_logging", lambda _level: None)
    monkeypatch.setattr(runtime, "settle_heap", lambda: calls.append("settle"))

    def serve(server: uvicorn.Server, sockets: Any = None) -> None:
        calls.append("serve")
        server.started = True

    monkeypatch.setattr(uvicorn.Server, "run", serve)

    def run(main: Coroutine[Any, Any, None]) -> None:
        main.close()
        calls.append("work")

    monkeypatch.setattr(cli, "_run", run)

    assert cli.main(["serve"]) == 0
    assert cli.main(["worker"]) == 0
    assert calls == ["settle", "serve", "settle", "work"]
