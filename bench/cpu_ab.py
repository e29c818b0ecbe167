"""CPU per request of two source trees, in process, interleaved: robust on a loaded host.

    python -m bench.cpu_ab A=main B=. --requests post,get,patch,list
    python -m bench.cpu_ab A=main B=. --backend postgres --rounds 7 --n 2000

Each variant is ``NAME=REV[:ENV=VALUE,...]`` as in ``bench.ab`` (a git revision, ``.`` for this
checkout, or a directory holding a ``src``). Every round starts
one child process per variant (variants alternating, the order flipping each round), with that
tree first on its ``PYTHONPATH``; the child seeds a fresh database, runs the app's lifespan and
drives the requests straight into the ASGI app (a minimal ASGI client: no HTTP, no socket, no
client library whose own cost would count), and reports ``time.process_time()`` per request
(the process's CPU, database threads included; on PostgreSQL the server's own CPU is not).
Within a child each request kind is timed in several batches and the median kept; the table
shows the median over rounds and each variant against the first. CPU time, not wall time,
and the same process for both: a busy host slows both alike and barely moves the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.ab import Variant, source_tree

ROOT = Path(__file__).resolve().parent.parent
CONTACTS = 2000
BATCHES = 5

# name -> (method, path or path with {id}, body or body with {n}, status expected)
REQUESTS: dict[str, tuple[str, str, bytes, int]] = {
    "post": ("POST", "/v1/contacts", b"", 201),
    "get": ("GET", "/v1/contacts/{id}", b"", 200),
    "patch": ("PATCH", "/v1/contacts/{id}", b'{"notes":"patched {n}"}', 200),
    "list": ("GET", "/v1/contacts?limit=50", b"", 200),
    "webhooks": ("GET", "/v1/webhooks", b"", 200),
    "calls": ("GET", "/v1/calls", b"", 200),
    "health": ("GET", "/healthz", b"", 200),
}


def _scope(method: str, target: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    path, _, query = target.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def _request(app: Any, scope: dict[str, Any], body: bytes) -> int:
    """One request through ``app``; its status."""
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


def _maker(kind: str, api_key: str, ids: tuple[str, ...]) -> Callable[[int], tuple[Any, bytes]]:
    from bench.env import CONTACT_BODY

    method, template, body, _ = REQUESTS[kind]
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"authorization", f"Bearer {api_key}".encode()),
        (b"content-type", b"application/json"),
    ]
    if kind == "post":
        body = CONTACT_BODY
    if body:
        headers.append((b"content-length", b"0"))  # replaced per request below

    def make(n: int) -> tuple[Any, bytes]:
        target = template.replace("{id}", ids[n % len(ids)]) if ids else template
        payload = body.replace(b"{n}", str(n).encode())
        own = headers if not payload else [*headers[:-1], (b"content-length", b"%d" % len(payload))]
        return _scope(method, target, own), payload

    return make


async def _measure(kinds: list[str], n: int) -> dict[str, float]:
    from bench.seed import seed_account
    from hookline.app import create_app
    from hookline.settings import Settings

    settings = Settings()
    account = await asyncio.to_thread(seed_account, settings, "cpu", CONTACTS)
    app = create_app(settings)
    result: dict[str, float] = {}
    async with app.router.lifespan_context(app):
        for kind in kinds:
            make = _maker(kind, account.api_key, account.sample_ids)
            expected = REQUESTS[kind][3]
            requests = [make(i) for i in range(n * (BATCHES + 1))]
            for scope, body in requests[:n]:  # warm-up: caches, pools, statements
                status = await _request(app, dict(scope), body)
                if status != expected:
                    raise SystemExit(f"{kind}: {status}, expected {expected}")
            batches = []
            for b in range(1, BATCHES + 1):
                batch = requests[b * n : (b + 1) * n]
                gc.collect()
                started = time.process_time()
                for scope, body in batch:
                    await _request(app, dict(scope), body)
                batches.append((time.process_time() - started) / n * 1e6)
            result[kind] = statistics.median(batches)
    return result


def _child(kinds: list[str], n: int) -> None:
    print(json.dumps(asyncio.run(_measure(kinds, n))))


def _run_child(src: str, env: dict[str, str], kinds: list[str], n: int) -> dict[str, float]:
    child_env = {**os.environ, **env, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.cpu_ab", "--child", ",".join(kinds), "--n", str(n)],
        env=child_env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{src}: {done.stderr[-2000:]}")
    measured: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def _database_env(backend: str, directory: Path, name: str, pg: Any) -> dict[str, str]:
    from bench.env import hookline_env, sqlite_url

    url = sqlite_url(directory, name) if backend == "sqlite" else pg.create_database()
    return hookline_env(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="*", help="NAME=REV[:ENV=VALUE,...], as bench.ab's")
    parser.add_argument("--requests", default="post,get,patch,list")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=1000, help="requests per timed batch")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child.split(","), args.n)
        return
    variants = [Variant.parse(v) for v in args.variants]
    kinds = args.requests.split(",")
    unknown = set(kinds) - set(REQUESTS)
    if unknown or len(variants) < 1:
        parser.error(f"variants NAME=REV, requests among {', '.join(REQUESTS)}")
    results: dict[str, dict[str, list[float]]] = {v.name: {k: [] for k in kinds} for v in variants}
    with ExitStack() as stack:
        pg = None
        if args.backend == "postgres":
            from tests.support.postgres import running_postgres

            pg = stack.enter_context(running_postgres())
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for round_ in range(args.rounds):
            order = variants if round_ % 2 == 0 else variants[::-1]
            for variant in order:
                name = variant.name
                env = {
                    **_database_env(args.backend, directory, f"{name}{round_}", pg),
                    **variant.env,
                }
                src = str(source_tree(variant.rev, directory))
                for kind, value in _run_child(src, env, kinds, args.n).items():
                    results[name][kind].append(value)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
    _report(results, [v.name for v in variants], kinds, args.backend)


def _report(
    results: dict[str, dict[str, list[float]]], names: list[str], kinds: list[str], backend: str
) -> None:
    first = names[0]
    print(f"CPU µs per request, in process, {backend}: median over rounds (range)")
    print(
        "| request | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"{n}/{first}" for n in names[1:])
        + " |"
    )
    print("|---" * (2 * len(names)) + "|")
    for kind in kinds:
        cells = []
        for name in names:
            values = results[name][kind]
            cells.append(f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})")
        base = results[first][kind]
        for name in names[1:]:
            per_round = [b / a for a, b in zip(base, results[name][kind], strict=True)]
            cells.append(f"{statistics.median(per_round):.3f}x")
        print(f"| {REQUESTS[kind][0]} {REQUESTS[kind][1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
