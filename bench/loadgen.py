"""Open-loop load at a fixed rate: ``python -m bench.loadgen --url U --rate R --seconds S ...``.

Request *i* is due at ``start + i / rate`` whatever happened to earlier ones (unlike wrk's
closed loop, a slow answer doesn't slow the offer), and its latency is measured from when it was
due, so queueing in front of a saturated server shows up in the figures (no coordinated
omission). Prints one JSON line: offered and achieved rate, p50/p99 in ms, errors.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import aiohttp
import orjson
import uvloop

from bench.stats import percentile

MAX_IN_FLIGHT = 1024


async def _run(args: argparse.Namespace) -> dict[str, float | int | None]:
    headers = orjson.loads(args.headers)
    body = args.body.encode() if args.body else None
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    errors = 0
    total = int(args.rate * args.seconds)
    in_flight: set[asyncio.Task[None]] = set()
    connector = aiohttp.TCPConnector(limit=MAX_IN_FLIGHT, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(due: float) -> None:
            nonlocal errors
            try:
                async with session.request(args.method, args.url, data=body, headers=headers) as r:
                    await r.read()
                    if r.status >= 400:
                        errors += 1
                        return
            except aiohttp.ClientError:
                errors += 1
                return
            latencies.append((loop.time() - due) * 1000)

        start = loop.time() + 0.05
        for i in range(total):
            due = start + i / args.rate
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            task = asyncio.create_task(one(due))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        if in_flight:
            await asyncio.wait(in_flight)
        elapsed = loop.time() - start
    latencies.sort()
    return {
        "offered": args.rate,
        "achieved": len(latencies) / elapsed if elapsed else 0.0,
        "sent": total,
        "ok": len(latencies),
        "errors": errors,
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--method", default="POST")
    parser.add_argument("--body", default="")
    parser.add_argument("--headers", default="{}")
    args = parser.parse_args()
    started = time.perf_counter()
    result = uvloop.run(_run(args))
    result["wall_s"] = time.perf_counter() - started
    sys.stdout.write(orjson.dumps(result).decode() + "\n")


if __name__ == "__main__":
    main()
