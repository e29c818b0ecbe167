"""Work a request starts and does not wait for (a key's ``last_used_at``, a periodic sweep).

The app keeps a reference to each task until it is done (``app.state.background_tasks``), so the
garbage collector cannot drop it half-way, and its lifespan waits for the rest at shutdown. Kept
out of ``api`` so that any layer an HTTP request passes through can use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from starlette.requests import Request


def spawn(request: Request, coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` after the response, keeping a reference so it isn't garbage-collected."""
    tasks: set[asyncio.Task[None]] = request.app.state.background_tasks
    task = asyncio.get_running_loop().create_task(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
