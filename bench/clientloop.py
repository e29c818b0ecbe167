"""The delivery ceiling: a bare aiohttp loop POSTing signed webhook bodies, nothing else.

``python -m bench.clientloop --url U --count N --concurrency C --secret whsec_...`` builds N event
bodies and Standard Webhooks headers with hookline's own signing code (what the worker sends),
then POSTs them with C concurrent requests over one session (signed up front: this is the
ceiling, the worker signs per attempt). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime

import aiohttp
import orjson
import uvloop

from bench.baseline import CONTACT
from hookline import ids
from hookline.delivery.signing import build_headers, event_body


def signed_requests(count: int, secret: str) -> list[tuple[bytes, dict[str, str]]]:
    now = datetime.now(UTC)
    out = []
    for _ in range(count):
        event_id = ids.event_id()
        body = event_body(event_id, "contact.created", now, CONTACT, None)
        out.append((body, build_headers(event_id, int(now.timestamp()), body, [secret])))
    return out


async def _post_all(
    url: str, requests: list[tuple[bytes, dict[str, str]]], concurrency: int
) -> int:
    queue = iter(requests)
    failures = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def lane() -> None:
            nonlocal failures
            for body, headers in queue:
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    failures += response.status >= 300

        await asyncio.gather(*(lane() for _ in range(concurrency)))
    return failures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--secret", required=True)
    args = parser.parse_args()
    requests = signed_requests(args.count, args.secret)
    started = time.perf_counter()
    failures = uvloop.run(_post_all(args.url, requests, args.concurrency))
    elapsed = time.perf_counter() - started
    result = {
        "count": args.count,
        "failures": failures,
        "seconds": elapsed,
        "rate": args.count / elapsed,
    }
    sys.stdout.write(orjson.dumps(result).decode() + "\n")


if __name__ == "__main__":
    main()
