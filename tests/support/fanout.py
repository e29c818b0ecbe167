"""The worker's fan-out, run by hand in tests that start no worker."""

from __future__ import annotations

from hookline.delivery import manager
from hookline.storage.db import Database
from hookline.timeutil import utcnow


async def fan_out_everything(db: Database) -> None:
    """Fan out every undispatched event, batch after batch.

    The suite's shared database holds other tests' undispatched events, and they come first: one
    batch may not reach the events of the test that calls this.
    """
    while (await manager.dispatch_events(db, now=utcnow())).events:
        pass
