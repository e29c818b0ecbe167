"""Webhook filters: CEL (Common Expression Language) expressions over the delivered body.

A filter is checked when a webhook is created or changed: it must compile (a compile error is
a 422 naming ``filter``, with the parser's message) and its estimated worst-case cost
(``filter_cost``) must be within the budget (``HOOKLINE_FILTER_COST_LIMIT``, else a 422 too).

At fan-out an event becomes a delivery to a filtered webhook only when the expression is
exactly ``true`` for ``{"event": body}``; a run-time error (a missing field, a type mismatch)
counts as false. The ``cel`` interpreter holds the GIL for a whole evaluation and cannot be
interrupted, so no filter runs in the server's process: ``FilterJudge`` evaluates them in a
child process (``filter_child``) at the lowest CPU priority, bounded in memory, one at a time
with a deadline, and kills it when one overruns (that evaluation is cut: it counts as false
and as one of the webhook's ``filter_errors``). The worker's fan-out never waits for it: an
event whose verdicts are not known yet stays undispatched until they are (``manager``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hookline.delivery.filter_cost import CostError, estimated_cost
from hookline.settings import Settings

MAX_FILTER_LENGTH = 1024
_CACHE_SIZE = 1024
DEFAULT_COST_LIMIT = 1_000_000
DEFAULT_TIMEOUT = 0.25
DEFAULT_MEMORY_BYTES = 512 * 1024 * 1024
_VERDICTS_KEPT = 100_000


class FilterError(ValueError):
    """The expression does not compile or costs too much; the message says which."""


@functools.lru_cache(maxsize=_CACHE_SIZE)
def compiled(expression: str) -> Any:
    # Imported on first use: the package's __init__ also loads its command-line tool's
    # dependencies (0.6 s), which a worker or API process without filters need not pay.
    import cel

    try:
        return cel.compile(expression)
    except ValueError as exc:
        raise FilterError(str(exc)) from None


@dataclass(frozen=True)
class Limits:
    cost: int = DEFAULT_COST_LIMIT
    """The largest estimated cost accepted at creation or update."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one evaluation may take."""
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    """The evaluating process's address space."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            settings.filter_cost_limit, settings.filter_timeout, settings.filter_memory_mb << 20
        )


_limits = Limits()


def check_filter(expression: str, cost_limit: int | None = None) -> str:
    """``expression`` if it compiles, is not blank or too long, and its estimated cost is at
    most ``cost_limit`` (the configured budget by default); ``FilterError`` otherwise."""
    cost_limit = _limits.cost if cost_limit is None else cost_limit
    if not expression.strip():
        raise FilterError("filter must not be blank; send null for no filter")
    if len(expression) > MAX_FILTER_LENGTH:
        raise FilterError(f"filter must be at most {MAX_FILTER_LENGTH} characters")
    compiled(expression)
    try:
        cost = estimated_cost(expression)
    except CostError as exc:
        raise FilterError(f"filter cost cannot be estimated: {exc}") from None
    if cost > cost_limit:
        raise FilterError(
            f"filter's estimated cost {cost} exceeds the budget of {cost_limit}; "
            "iterate less (fewer nested comprehensions, no map/filter over event lists)"
        )
    return expression


class Outcome(Enum):
    MATCH = "match"
    MISS = "miss"
    CUT = "cut"
    """Stopped by the time or memory limit: counts as a miss and as a filter error."""


class _Child:
    """The evaluating processes (``filter_child``): started on first use; the one that
    evaluates is killed on an overrun, and the first forks the next at once."""

    def __init__(self, timeout: float, memory_bytes: int) -> None:
        self.timeout = timeout
        self.memory_bytes = memory_bytes
        self._process: subprocess.Popen[bytes] | None = None
        self._evaluator: int | None = None

    def run(self, expression: str, body: Mapping[str, Any]) -> Outcome:
        process = self._ready()
        if process is None or process.stdin is None:
            return Outcome.CUT
        try:
            process.stdin.write(json.dumps([expression, body], default=str).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            self.stop()
            return Outcome.CUT
        answer = _line_within(process, self.timeout)
        if answer in (b"1\n", b"0\n"):
            return Outcome.MATCH if answer == b"1\n" else Outcome.MISS
        if answer is None and self._evaluator is not None:
            _kill(self._evaluator)
        # Late, or ended by the memory limit: then the answer read is its successor's "ready",
        # which is the evaluator from now on (no other "ready" line will come).
        self._evaluator = _ready_pid(answer)
        return Outcome.CUT

    def _ready(self) -> subprocess.Popen[bytes] | None:
        """The process, once an evaluator said it is ready (None: none could start)."""
        if self._process is None or self._process.poll() is not None:
            self.stop()
            self._process = self._start()
        if self._evaluator is None:
            deadline = time.monotonic() + _START_TIMEOUT
            while self._evaluator is None and time.monotonic() < deadline:
                line = _line_within(self._process, deadline - time.monotonic())
                if not line:
                    self.stop()
                    return None
                self._evaluator = _ready_pid(line)  # None: a late answer of the one killed
        return self._process

    def _start(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "hookline.delivery.filter_child", str(self.memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def stop(self) -> None:
        if self._evaluator is not None:
            _kill(self._evaluator)
            self._evaluator = None
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()


_START_TIMEOUT = 60.0


def _line_within(process: subprocess.Popen[bytes], timeout: float) -> bytes | None:
    assert process.stdout is not None
    readable, _, _ = select.select([process.stdout], [], [], max(0.0, timeout))
    return process.stdout.readline() if readable else None


def _ready_pid(line: bytes | None) -> int | None:
    """The evaluator's process id if ``line`` is its ``ready PID``, else None."""
    return int(line.split()[1]) if line is not None and line.startswith(b"ready ") else None


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# -- the judge ---------------------------------------------------------------------------------

Key = tuple[str, str, str]
"""(event id, webhook id, expression): one verdict."""


@dataclass
class _Job:
    key: Key
    expression: str
    body: Mapping[str, Any]
    done: Future[Outcome] = field(default_factory=Future)


class FilterJudge:
    """Evaluates filters in its child process from a thread of its own, accounts in turn
    (one evaluation of each account with work waiting, then the next round), so an account
    whose filters are slow delays only its own events. Verdicts are kept until taken."""

    def __init__(self, timeout: float, memory_bytes: int) -> None:
        self._child = _Child(timeout, memory_bytes)
        self._lock = threading.Condition()
        self._queues: OrderedDict[str, deque[_Job]] = OrderedDict()
        self._asked: set[Key] = set()
        self._verdicts: OrderedDict[Key, Outcome] = OrderedDict()
        self._wakers: dict[asyncio.AbstractEventLoop, Callable[[], None]] = {}
        self._thread: threading.Thread | None = None

    def close(self) -> None:
        """Stop the child process (a new one starts if anything is asked again)."""
        with self._lock:
            self._child.stop()

    def wakes(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the running loop whenever new verdicts are ready."""
        with self._lock:
            self._wakers[asyncio.get_running_loop()] = callback

    def verdict(self, key: Key) -> Outcome | None:
        with self._lock:
            return self._verdicts.get(key)

    def forget(self, key: Key) -> None:
        with self._lock:
            self._verdicts.pop(key, None)

    def ask(self, account_id: str, key: Key, body: Mapping[str, Any]) -> None:
        """Evaluate ``key``'s expression on ``body`` (once, however often asked)."""
        with self._lock:
            if key in self._asked or key in self._verdicts:
                return
            self._asked.add(key)
        self._queue(account_id, _Job(key, key[2], body))

    async def evaluate(self, account_id: str, expression: str, body: Mapping[str, Any]) -> Outcome:
        """One evaluation, awaited (recovery's), in the same turns as the fan-out's."""
        job = _Job(("", "", expression), expression, body)
        self._queue(account_id, job)
        return await asyncio.wrap_future(job.done)

    def _queue(self, account_id: str, job: _Job) -> None:
        with self._lock:
            self._queues.setdefault(account_id, deque()).append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="filters", daemon=True)
                self._thread.start()
            self._lock.notify()

    def _next(self) -> _Job:
        with self._lock:
            while not self._queues:
                self._lock.wait()
            account, jobs = self._queues.popitem(last=False)
            job = jobs.popleft()
            if jobs:
                self._queues[account] = jobs  # to the back: the other accounts go first
            return job

    def _run(self) -> None:
        woke_at = 0.0
        while True:
            job = self._next()
            outcome = self._child.run(job.expression, job.body)
            job.done.set_result(outcome)
            with self._lock:
                if job.key[0]:
                    self._asked.discard(job.key)
                    self._verdicts[job.key] = outcome
                    while len(self._verdicts) > _VERDICTS_KEPT:
                        self._verdicts.popitem(last=False)
                idle = not self._queues
            if idle or time.monotonic() - woke_at > 0.02:
                woke_at = time.monotonic()
                self._wake()

    def _wake(self) -> None:
        with self._lock:
            wakers = list(self._wakers.items())
        for loop, callback in wakers:
            try:
                loop.call_soon_threadsafe(callback)
            except RuntimeError:  # that loop is closed
                with self._lock:
                    self._wakers.pop(loop, None)


_judge: FilterJudge | None = None
_judge_lock = threading.Lock()


def configure(limits: Limits) -> None:
    """This process's limits (from the settings: ``HOOKLINE_FILTER_COST_LIMIT``,
    ``HOOKLINE_FILTER_TIMEOUT``, ``HOOKLINE_FILTER_MEMORY_MB``); the app and the worker set
    them as they are made."""
    global _limits, _judge
    with _judge_lock:
        if limits != _limits and _judge is not None:
            _judge.close()
            _judge = None
        _limits = limits


def judge() -> FilterJudge:
    """This process's judge (one child process for all its workers and loops)."""
    global _judge
    with _judge_lock:
        if _judge is None:
            _judge = FilterJudge(_limits.timeout, _limits.memory_bytes)
        return _judge
