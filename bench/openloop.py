"""Runs bench.loadgen (open loop, fixed rate) on the load core and returns its summary."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import orjson

from bench.procs import LOAD_CORE, pinned


def offer(
    url: str,
    rate: float,
    seconds: float,
    *,
    headers: Mapping[str, str],
    body: bytes | None,
    method: str = "POST",
) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "bench.loadgen",
        "--url",
        url,
        "--rate",
        f"{rate:.1f}",
        "--seconds",
        str(seconds),
        "--method",
        method,
        "--headers",
        orjson.dumps(dict(headers)).decode(),
        "--body",
        body.decode() if body else "",
    ]
    done = subprocess.run(
        pinned(command, LOAD_CORE),
        capture_output=True,
        text=True,
        timeout=seconds + 120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"loadgen failed:\n{done.stdout}\n{done.stderr}")
    result: dict[str, Any] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return result
