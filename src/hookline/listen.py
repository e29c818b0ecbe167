"""``hookline listen``: stream the account's events to a URL on this machine, signed.

No relay: the events come straight from the API (``GET /v1/events/stream``) to this process
and from here to ``--forward-to``. A signing secret is made for the session and printed once;
each event is POSTed signed with it, with the same Standard Webhooks headers as real
deliveries, and one line is printed per event. A dropped connection is resumed from the last
event received (``Last-Event-ID``), so nothing is lost or repeated while the process runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp

from hookline.delivery.signing import build_headers

DEFAULT_API_URL = "http://127.0.0.1:8000"
RECONNECT_SECONDS = 1.0
FORWARD_TIMEOUT_SECONDS = 15.0


@dataclass
class Message:
    id: str = ""
    event: str = ""
    data: str = ""


SUMMARY = "forward the account's events, signed, to a local URL"
DESCRIPTION = (
    "Streams the account's events from the API (GET /v1/events/stream) and POSTs each to "
    "--forward-to, signed with a secret printed once for this session. Uses no database."
)


def add_arguments(listen: argparse.ArgumentParser) -> None:
    listen.add_argument("--forward-to", required=True, help="e.g. http://localhost:3000/hooks")
    listen.add_argument(
        "--api-url", default=DEFAULT_API_URL, help="the hookline API to stream from"
    )
    listen.add_argument("--key", help="API key (default: $HOOKLINE_API_KEY)")
    listen.add_argument("--events", help="comma-separated event types (default: all)")
    listen.set_defaults(func=cmd_listen)


def cmd_listen(args: argparse.Namespace) -> int:
    key = args.key or os.environ.get("HOOKLINE_API_KEY")
    if not key:
        print("hookline: give --key or set HOOKLINE_API_KEY", file=sys.stderr)
        return 2
    from hookline.domain.webhooks import generate_secret

    secret = generate_secret()
    print(f"Signing secret for this session: {secret}", flush=True)
    print(f"Forwarding events to {args.forward_to} (Ctrl-C to stop)", flush=True)
    try:
        asyncio.run(_listen(args, key, secret))
    except KeyboardInterrupt:
        return 0
    return 0


async def _listen(args: argparse.Namespace, key: str, secret: str) -> None:
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
