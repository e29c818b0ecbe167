"""Schemathesis against a live ``hookline serve``: shared by the CI test and scripts/fuzz.sh.

    python -m tests.api.fuzz 500      # the long run (``make fuzz``)

Every operation in /v1/openapi.json, positive and negative data, every phase (examples,
coverage, fuzzing, stateful links), every check (``--checks all``): no 5xx, every response as
documented, every request the schema allows accepted and every one it forbids refused, ``Allow``
on 405s, ... The API description must be exact for that to pass. Private targets are allowed:
whether a host is public depends on DNS, which no schema can say (tests/delivery/test_ssrf.py
covers that rule).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from tests.support.server import cli_env, run_cli, running_server

CHECKS = "all"
HOOKS = "tests.api.fuzz_hooks"
REPOSITORY = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("schemathesis.toml")
API_KEY_VARIABLE = "HOOKLINE_FUZZ_API_KEY"
"""The key the config's ``[auth.openapi.bearerAuth]`` sends."""


def fuzz_env(directory: Path) -> dict[str, str]:
    return {
        "HOOKLINE_DATABASE_URL": f"sqlite:///{directory / 'fuzz.db'}",
        "HOOKLINE_SECRET_KEY": "fuzz-secret-key",
        # The fuzzer is one client sending as fast as it can: 429s would only hide coverage.
        "HOOKLINE_RATE_LIMIT": "1000000/second",
        "HOOKLINE_LOG_LEVEL": "WARNING",
        "HOOKLINE_ALLOW_PRIVATE_TARGETS": "true",
    }


def schemathesis_command(base_url: str, examples: int, seed: int) -> list[str]:
    return [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file", str(CONFIG),
        "run",
        f"{base_url}/v1/openapi.json",
        "--checks", CHECKS,
        "--mode", "all",
        "--max-examples", str(examples),
        "--seed", str(seed),
        # One worker: with two threads, hypothesis' lambda descriptions (ast.parse) hit CPython
        # 3.11's process-wide AST recursion counter ("AST constructor recursion depth
        # mismatch", a runtime error that failed a CI run; per-thread from 3.12 on).
        "--workers", "1",
        "--request-timeout", "10",
        "--suppress-health-check", "all",
        "--output-sanitize", "true",
    ]  # fmt: skip


def _with_repository() -> str:
    """The tests' package on the path, before the tree under test if one was set."""
    return os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))


def run_fuzz(examples: int, seed: int = 20261122) -> tuple[subprocess.CompletedProcess[str], str]:
    """Returns (schemathesis' result, the server's log)."""
    # On tmpfs when there is one: the fuzzer's thousands of fsynced writes are not under test.
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="hookline-fuzz-", dir=scratch) as tmp:
        env = fuzz_env(Path(tmp))
        run_cli("migrate", env=env)  # the CLI never creates a database as a side effect
        created = run_cli("accounts", "create", "fuzz", env=env)
        if created.returncode != 0:
            raise RuntimeError(created.stderr)
        api_key = orjson.loads(created.stdout)["api_key"]
        with running_server(env, worker=False) as server:
            result = subprocess.run(
                schemathesis_command(server.base_url, examples, seed),
                env=cli_env(
                    {
                        "SCHEMATHESIS_HOOKS": HOOKS,
                        "PYTHONPATH": _with_repository(),
                        API_KEY_VARIABLE: api_key,
                    }
                ),
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
                cwd=tmp,
            )
            return result, server.logs()


def main(argv: list[str]) -> int:
    examples = int(argv[1]) if len(argv) > 1 else 200
    result, _logs = run_fuzz(examples)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
