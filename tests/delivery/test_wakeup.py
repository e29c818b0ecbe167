"""``delivery.wakeup``: what a PostgreSQL wake-up puts on the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from hookline.delivery.wakeup import NOTIFY_CHANNEL, make_wakeup
from hookline.settings import Settings
from tests.delivery.helpers import Env


async def test_a_notify_carries_its_senders_origin(pg_env: Env) -> None:
    """Workers tell their own process's NOTIFYs apart by this payload (``Worker.on_notify``)."""
    dsn = make_url(pg_env.base["database_url"]).set(drivername="postgresql")
    listener = await asyncpg.connect(dsn.render_as_string(hide_password=False))
    payloads: asyncio.Queue[str] = asyncio.Queue()

    def received(*args: Any) -> None:
        payloads.put_nowait(args[3])

    await listener.add_listener(NOTIFY_CHANNEL, received)
    wakeup = make_wakeup(Settings(**pg_env.base), pg_env.db)
    try:
        wakeup.events_committed()
        assert await asyncio.wait_for(payloads.get(), timeout=5) == wakeup.origin
    finally:
        await wakeup.close()
        await listener.close()
