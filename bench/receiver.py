"""A fast local webhook receiver in its own process: ``python -m bench.receiver --port N``.

``POST /<name>`` answers by name: ``hang*`` never answers (until the sender gives up), ``fail*``
answers 500 (only counted: ``failed`` in the stats), anything else 204 at once, recorded as
(webhook-id, receipt time, body); ``GET /stats/<name>?since=K`` summarises them from the K-th
on: count, unique ids, duplicates, first and last receipt, and commit-to-receipt latency =
receipt time minus the event's ``timestamp`` (taken when the event row was written, just before
its transaction commits; truncated to the millisecond, so figures read up to 1 ms high).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import defaultdict
from datetime import datetime

import orjson
import uvloop
from aiohttp import web

from bench.stats import percentile

_records: dict[str, list[tuple[str, float, bytes]]] = defaultdict(list)
_failed: dict[str, int] = defaultdict(int)


async def hook(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name.startswith("hang"):
        await asyncio.sleep(3600)
    body = await request.read()
    if name.startswith("fail"):
        _failed[name] += 1
        return web.Response(status=500)
    _records[name].append((request.headers.get("webhook-id", ""), time.time(), body))
    return web.Response(status=204)


def _event_time(body: bytes) -> float:
    stamp = orjson.loads(body)["timestamp"]
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


async def stats(request: web.Request) -> web.Response:
    since = int(request.query.get("since", "0"))
    records = _records.get(request.match_info["name"], [])[since:]
    ids = [r[0] for r in records]
    latencies = sorted((r[1] - _event_time(r[2])) * 1000 for r in records) if records else []
    summary = {
        "count": len(records),
        "unique": len(set(ids)),
        "duplicates": len(ids) - len(set(ids)),
        "first": records[0][1] if records else None,
        "last": records[-1][1] if records else None,
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "failed": _failed.get(request.match_info["name"], 0),
    }
    return web.json_response(summary)


async def reset(_request: web.Request) -> web.Response:
    _records.clear()
    return web.Response(status=204)


async def ready(_request: web.Request) -> web.Response:
    return web.json_response({})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = web.Application()
    app.add_routes(
        [
            web.get("/ready", ready),
            web.get("/stats/{name}", stats),
            web.post("/reset", reset),
            web.post("/{name}", hook),
        ]
    )
    uvloop.install()
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
