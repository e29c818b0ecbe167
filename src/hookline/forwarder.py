"""What ``hookline listen`` runs: the event stream read and each event forwarded, signed.

Apart from the command's declaration (``hookline.listen``) so that every other command starts
without importing aiohttp (~0.3-0.5 s of each CLI run).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp

from hookline.delivery.signing import build_headers

RECONNECT_SECONDS = 1.0
FORWARD_TIMEOUT_SECONDS = 15.0


@dataclass
class Message:
    id: str = ""
    event: str = ""
    data: str = ""


async def listen(args: argparse.Namespace, key: str, secret: str) -> None:
    last_id: str | None = None
    stream_url = args.api_url.rstrip("/") + "/v1/events/stream"
    params = {"types": args.events} if args.events else {}
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        while True:
            headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            try:
                async with session.get(stream_url, params=params, headers=headers) as response:
                    if response.status in (401, 403, 422):
                        body = await response.text()
                        print(f"hookline: the API refused the stream: {body}", file=sys.stderr)
                        raise SystemExit(1)
                    response.raise_for_status()
                    async for message in _messages(response.content):
                        await _forward(session, args.forward_to, secret, message)
                        last_id = message.id
            except (aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
                print(
                    f"connection lost ({exc or type(exc).__name__}); reconnecting",
                    file=sys.stderr,
                    flush=True,
                )
            await asyncio.sleep(RECONNECT_SECONDS)


async def _messages(content: aiohttp.StreamReader) -> AsyncIterator[Message]:
    """Server-Sent Events messages; comment lines (heartbeats) are skipped."""
    message = Message()
    async for raw in content:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if message.id and message.data:
                yield message
            message = Message()
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "id":
            message.id = value
        elif field == "event":
            message.event = value
        elif field == "data":
            message.data = value if not message.data else message.data + "\n" + value


async def _forward(session: aiohttp.ClientSession, url: str, secret: str, message: Message) -> None:
    body = message.data.encode()
    headers = build_headers(message.id, int(time.time()), body, [secret])
    started = time.monotonic()
    try:
        async with session.post(
            url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=FORWARD_TIMEOUT_SECONDS),
        ) as response:
            await response.read()
            outcome = str(response.status)
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        outcome = f"error ({exc or type(exc).__name__})"
    elapsed = int((time.monotonic() - started) * 1000)
    now = datetime.now(UTC).strftime("%H:%M:%S")
    print(f"{now}  {message.event:<20} {message.id}  {outcome}  {elapsed} ms", flush=True)
