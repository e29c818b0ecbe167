"""The machine and software versions a run measured."""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
from importlib.metadata import version
from pathlib import Path

from bench.procs import LOAD_CORE, PINNING, SERVER_CORE


def machine() -> dict[str, str]:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    load = os.getloadavg()
    return {
        "nproc": str(os.cpu_count()),
        "CPU": model,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "kernel": platform.release(),
        "pinning": (
            f"server on core {SERVER_CORE}, load generator/receiver/PostgreSQL on core "
            f"{LOAD_CORE} (taskset)"
        )
        if PINNING
        else "none (one core or no taskset)",
        "load average at start": " ".join(f"{x:.2f}" for x in load),
    }


def versions(pg_version: str) -> dict[str, str]:
    wrk = subprocess.run(["wrk", "--version"], capture_output=True, text=True, check=False)
    return {
        "python": platform.python_version(),
        "fastapi": version("fastapi"),
        "starlette": version("starlette"),
        "uvicorn": version("uvicorn"),
        "pydantic": version("pydantic"),
        "sqlalchemy": version("sqlalchemy"),
        "asyncpg": version("asyncpg"),
        "aiohttp": version("aiohttp"),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": pg_version,
        "wrk": (wrk.stdout or wrk.stderr).split("[")[0].strip() or "unknown",
    }
