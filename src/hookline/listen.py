"""``hookline listen``: stream the account's events to a URL on this machine, signed.

No relay: the events come straight from the API (``GET /v1/events/stream``) to this process
and from here to ``--forward-to``. A signing secret is made for the session and printed once;
each event is POSTed signed with it, with the same Standard Webhooks headers as real
deliveries, and one line is printed per event. A dropped connection is resumed from the last
event received (``Last-Event-ID``), so nothing is lost or repeated while the process runs.
A wrong key or an unreachable API stops the command at once with one line (``forwarder``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from urllib.parse import urlsplit

DEFAULT_API_URL = "http://127.0.0.1:8000"


SUMMARY = "forward the account's events, signed, to a local URL"
DESCRIPTION = (
    "Streams the account's events from the API (GET /v1/events/stream) and POSTs each to "
    "--forward-to, signed with a secret printed once for this session. Uses no database."
)


def http_url(value: str) -> str:
    """An http:// or https:// URL with a host (argparse refuses anything else in one line)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an http:// or https:// URL, e.g. {DEFAULT_API_URL}"
        )
    return value


def add_arguments(listen: argparse.ArgumentParser) -> None:
    listen.add_argument(
        "--forward-to", required=True, type=http_url, help="e.g. http://localhost:3000/hooks"
    )
    listen.add_argument(
        "--api-url", default=DEFAULT_API_URL, type=http_url, help="the hookline API to stream from"
    )
    listen.add_argument("--key", help="API key (default: $HOOKLINE_API_KEY)")
    listen.add_argument("--events", help="comma-separated event types (default: all)")
    listen.set_defaults(func=cmd_listen)


def cmd_listen(args: argparse.Namespace) -> int:
    key = args.key or os.environ.get("HOOKLINE_API_KEY")
    if not key:
        print("hookline: give --key or set HOOKLINE_API_KEY", file=sys.stderr)
        return 2
    # Ctrl-C before the forwarder's own handler is in place (while it starts) is a stop too.
    try:
        from hookline.domain.webhooks import generate_secret
        from hookline.forwarder import run

        secret = generate_secret()

        def announce() -> None:
            print(f"Signing secret for this session: {secret}", flush=True)
            print(f"Forwarding events to {args.forward_to} (Ctrl-C to stop)", flush=True)

        return asyncio.run(run(args, key, secret, announce))
    except KeyboardInterrupt:
        return 0
