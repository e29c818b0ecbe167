"""Closed-loop load with wrk: a fixed number of connections, each sending as fast as answers come.

Each run gets a generated Lua script that sets the method, body and headers (and, for GETs, picks
a path from a list per request) and prints wrk's own summary as one JSON line at the end, so
percentiles come from wrk's histogram rather than from parsing its text report.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.procs import LOAD_CORE, pinned

_DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH_JSON {\"requests\": %d, \"duration_us\": %d, \"non2xx\": %d, \"socket_errors\": %d, " ..
    "\"p50_us\": %d, \"p90_us\": %d, \"p99_us\": %d, \"max_us\": %d}\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


def _lua_string(value: str) -> str:
    return json.dumps(value)  # a JSON string literal is a valid Lua string literal here


UNIQUE = "UNIQUE"
"""In a header value or the body, replaced by a token unique to each request (``unique=True``)."""


@dataclass(frozen=True)
class Request:
    """What every wrk connection sends: ``method path`` (or one of ``paths`` at random).

    With ``unique``, every ``UNIQUE`` in the header values and the body becomes a token of its own
    per request: a fresh ``Idempotency-Key`` each time, or a PATCH that really changes something.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes | None = None
    paths: Sequence[str] = ()
    unique: bool = False

    def lua(self) -> str:
        lines = [f"wrk.method = {_lua_string(self.method)}"]
        for name, value in self.headers.items():
            lines.append(f"wrk.headers[{_lua_string(name)}] = {_lua_string(value)}")
        if self.body is not None:
            lines.append(f"wrk.body = {_lua_string(self.body.decode())}")
        if self.paths:
            quoted = ",\n".join(_lua_string(p) for p in self.paths)
            lines.append(f"local paths = {{\n{quoted}\n}}")
        if self.paths or self.unique:
            lines.append("request = function()")
            path = "paths[math.random(#paths)]" if self.paths else "nil"
            if self.unique:
                lines.extend(_UNIQUE_REQUEST.format(path=path, run=uuid.uuid4().hex).splitlines())
            else:
                lines.append(f"  return wrk.format(nil, {path})")
            lines.append("end")
        return "\n".join(lines) + "\n" + _DONE


# wrk runs one Lua state per thread: the run's own id plus the address of a table of that state
# keep runs and threads apart.
_UNIQUE_REQUEST = """  if counter == nil then
    counter = 0
    prefix = "{run}" .. string.gsub(tostring({{}}), "table: ", "")
  end
  counter = counter + 1
  local tag = prefix .. "-" .. counter
  local headers = {{}}
  for name, value in pairs(wrk.headers) do
    headers[name] = (string.gsub(value, "UNIQUE", tag))
  end
  local body = wrk.body and (string.gsub(wrk.body, "UNIQUE", tag))
  return wrk.format(nil, {path}, headers, body)"""


@dataclass(frozen=True)
class Result:
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    requests: int
    non2xx: int
    socket_errors: int

    @property
    def errors(self) -> int:
        return self.non2xx + self.socket_errors


def run(
    base_url: str, request: Request, *, connections: int, seconds: float, threads: int = 1
) -> Result:
    """One wrk run, pinned to the load core."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(request.lua())
    try:
        command = [
            "wrk",
            f"-t{threads}",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "30s",
            "-s",
            script.name,
            base_url + request.path,
        ]
        completed = subprocess.run(
            pinned(command, LOAD_CORE),
            capture_output=True,
            text=True,
            check=False,
            timeout=seconds + 60,
        )
    finally:
        Path(script.name).unlink(missing_ok=True)
    return _parse(completed)


def _parse(completed: subprocess.CompletedProcess[str]) -> Result:
    for line in completed.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            data = json.loads(line.removeprefix("BENCH_JSON "))
            seconds = data["duration_us"] / 1e6
            return Result(
                rps=data["requests"] / seconds if seconds else 0.0,
                p50_ms=data["p50_us"] / 1000,
                p90_ms=data["p90_us"] / 1000,
                p99_ms=data["p99_us"] / 1000,
                requests=data["requests"],
                non2xx=data["non2xx"],
                socket_errors=data["socket_errors"],
            )
    raise RuntimeError(
        f"wrk failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}"
    )


def median(results: Sequence[Result]) -> Result:
    """Each figure's median across runs (the host's speed drifts between runs)."""
    return Result(
        rps=statistics.median(r.rps for r in results),
        p50_ms=statistics.median(r.p50_ms for r in results),
        p90_ms=statistics.median(r.p90_ms for r in results),
        p99_ms=statistics.median(r.p99_ms for r in results),
        requests=sum(r.requests for r in results),
        non2xx=sum(r.non2xx for r in results),
        socket_errors=sum(r.socket_errors for r in results),
    )
