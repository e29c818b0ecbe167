"""``hookline serve --workers N``: N server processes on one port, supervised.

The supervisor binds the port, migrates the database and settles what must be settled once (the
SQLite secret key file, the shared rate-limit table) before it forks the children, so they never
race each other at start-up. Each child then builds its own app (its own database connections,
group-commit writer and delivery worker) and accepts from a listening socket of its own on the
port (``listeners_per_process``); the kernel spreads new connections evenly over them.

The supervisor itself never runs an event loop or a thread: it forks, waits on the children's
pidfds and on its own signals, and nothing else, so forking again (a restart) is always safe.

* SIGTERM or SIGINT: the supervisor closes its copies of the listening sockets (so the port
  stops taking connections once the children close theirs) and every child gets one SIGTERM
  (the graceful stop of stopping.py); after ``stop_timeout`` the stragglers are SIGKILLed. Exit
  status 0, also for a signal that came before the children were forked.
* A child that exits on its own is restarted in its slot, unless children died more than
  ``RESTART_LIMIT`` times within ``RESTART_WINDOW`` seconds (a crash loop: the database is gone,
  the disk is full) or a child could not start at all (``NOT_STARTED``): then the supervisor stops
  the others and exits non-zero, so that systemd or the orchestrator sees the failure.
* Children die with the supervisor (``PR_SET_PDEATHSIG``): a supervisor killed with SIGKILL
  leaves no server processes behind holding the port.

Every log line of a child carries its ``pid`` and ``process_name`` (``serve-1`` ... ``serve-N``);
the supervisor's are ``supervisor``.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hookline.stopping import STOP_SIGNALS, catch_signals, stop_requested

log = logging.getLogger("hookline.supervisor")

RESTART_LIMIT = 5
RESTART_WINDOW = 60.0
NOT_STARTED = 3
"""A child's exit status when its server did not start (the log says why): not worth retrying."""
_PR_SET_PDEATHSIG = 1

serving_under: int | None = None
"""In a child: the supervisor's pid (None in a process no supervisor forked)."""


@contextlib.contextmanager
def metrics_shared_across_processes() -> Iterator[None]:
    """A folder for prometheus_client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``), so
    that ``/metrics`` adds up every process's counters (hookline.metrics); removed at the end.
    Must come before prometheus_client is imported: it picks its mode at import."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # the operator chose one: theirs to clean
        yield
        return
    if "prometheus_client" in sys.modules:
        log.warning("metrics stay per process: prometheus_client was imported too early")
        yield
        return
    folder = tempfile.mkdtemp(prefix="hookline-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    try:
        yield
    finally:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        shutil.rmtree(folder, ignore_errors=True)


def is_sibling(hostname: str, pid: int) -> bool:
    """Whether ``pid`` on ``hostname`` is another process of this ``hookline serve``, or was:
    a process of this host that is gone (killed, then replaced) is taken for one, since a
    sibling's worker row outlives it until its lease runs out."""
    if serving_under is None or hostname != socket.gethostname():
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    # The command name may contain spaces; the parent pid is the 2nd field after ')'.
    return int(stat.rsplit(")", 1)[1].split()[1]) == serving_under


LISTEN_BACKLOG = 2048
"""As uvicorn's own default."""


def listeners_per_process(listener: socket.socket, count: int) -> list[socket.socket]:
    """``count`` listening sockets on ``listener``'s address, one per process, in its place.

    On one listener the processes took connections as each happened to accept them: a burst of
    new connections (a client's pool opening) could land almost all on one process, which
    queued its requests while the other idled. With ``SO_REUSEPORT`` the kernel hashes each new
    connection to one of the sockets. The supervisor keeps them all open and listening, so the
    connections queued on the socket of a process that died wait for its replacement, which
    inherits that socket, instead of being refused.

    ``listener``, bound without ``SO_REUSEPORT``, proved the port free (another server on it
    fails there, at once, whatever its sockets); it is closed here so that the group can bind.
    """
    address = listener.getsockname()
    family, kind, proto = listener.family, listener.type, listener.proto
    listener.close()
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            each = socket.socket(family, kind, proto)
            sockets.append(each)
            each.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            each.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            each.bind(address)
            each.listen(LISTEN_BACKLOG)
    except BaseException:
        for each in sockets:
            each.close()
        raise
    return sockets


@dataclass
class _Child:
    slot: int
    pid: int
    pidfd: int


class Supervisor:
    """Runs ``run_child(slot)`` in ``count`` forked processes; ``run()`` returns the exit status."""

    def __init__(
        self,
        count: int,
        run_child: Callable[[int], int],
        *,
        stop_timeout: float = 30.0,
        listeners: Sequence[socket.socket] = (),
    ) -> None:
        self.count = count
        self.run_child = run_child
        self.stop_timeout = stop_timeout
        self.listeners = listeners
        self._children: dict[int, _Child] = {}  # by pidfd
        self._deaths: deque[float] = deque()
        self._stop_requested = False

    def run(self) -> int:
        signals_in, signals_out = socket.socketpair()
        for end in (signals_in, signals_out):
            end.setblocking(False)
        previous_fd = signal.set_wakeup_fd(signals_out.fileno())
        previous = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
        try:
            if stop_requested():  # a signal during start-up (caught by stopping.signals_caught)
                log.info("stopped before serving")
                return 0
            for slot in range(1, self.count + 1):
                self._fork(slot, close=(signals_in, signals_out))
            log.info("serving with %d processes", self.count)
            return self._watch(signals_in, close=(signals_in, signals_out))
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            signal.set_wakeup_fd(previous_fd)
            signals_in.close()
            signals_out.close()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._stop_requested = True

    def _watch(self, signals_in: socket.socket, *, close: tuple[socket.socket, ...]) -> int:
        while True:
            if self._stop_requested:
                log.info("stopping %d processes", len(self._children))
                self._stop_all()
                return 0
            signal_fd = signals_in.fileno()
            ready, _, _ = select.select([signal_fd, *self._children], [], [])
            if signal_fd in ready:
                with contextlib.suppress(BlockingIOError):
                    signals_in.recv(64)
            for pidfd in ready:
                if pidfd == signal_fd:
                    continue
                child = self._children.pop(pidfd)
                status = self._reap(child)
                if self._stop_requested:
                    continue
                failure = self._failure_after_exit(child, status)
                if failure is not None:
                    self._stop_all()
                    return failure
                log.info("restarting process serve-%d", child.slot)
                self._fork(child.slot, close=close)

    def _reap(self, child: _Child) -> int:
        _, wait_status = os.waitpid(child.pid, 0)
        os.close(child.pidfd)
        status = os.waitstatus_to_exitcode(wait_status)
        if not self._stop_requested:
            log.warning(
                "process serve-%d (pid %d) exited with status %d",
                child.slot,
                child.pid,
                status,
                extra={"exit_status": status},
            )
        return status

    def _failure_after_exit(self, child: _Child, status: int) -> int | None:
        """The supervisor's exit status if it should give up after a child's exit, else None."""
        if status == NOT_STARTED:
            log.error("process serve-%d could not start; stopping", child.slot)
            return NOT_STARTED
        now = time.monotonic()
        self._deaths.append(now)
        while self._deaths and self._deaths[0] < now - RESTART_WINDOW:
            self._deaths.popleft()
        if len(self._deaths) > RESTART_LIMIT:
            log.error(
                "server processes exited %d times within %d s; stopping",
                len(self._deaths),
                int(RESTART_WINDOW),
            )
            return 1
        return None

    def _fork(self, slot: int, *, close: tuple[socket.socket, ...]) -> None:
        parent = os.getpid()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _become_child(slot, parent, close, self.run_child)
        pidfd = os.pidfd_open(pid)
        self._children[pidfd] = _Child(slot, pid, pidfd)

    def _stop_all(self) -> None:
        """No more connections, one SIGTERM each, then wait; SIGKILL whoever is still running
        after ``stop_timeout``."""
        for listener in self.listeners:
            listener.close()
        for child in self._children.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        killed = False
        while self._children:
            left = max(0.0, deadline - time.monotonic())
            if left == 0 and not killed:
                self._kill_stragglers()
                killed = True
            ready, _, _ = select.select(list(self._children), [], [], None if killed else left)
            for pidfd in ready:
                self._reap(self._children.pop(pidfd))
        log.info("all processes stopped")

    def _kill_stragglers(self) -> None:
        for child in self._children.values():
            log.warning("process serve-%d (pid %d) did not stop; killing it", child.slot, child.pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)


def _become_child(
    slot: int,
    parent: int,
    inherited: tuple[socket.socket, ...],
    run_child: Callable[[int], int],
) -> None:
    global serving_under
    serving_under = parent
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        catch_signals()  # a SIGTERM before the server has started stops it once started
        for sock in inherited:
            sock.close()
        _die_with(parent)
        status = run_child(slot)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        log.exception("process serve-%d failed", slot)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _die_with(parent: int) -> None:
    """Ask Linux for a SIGTERM when the supervisor dies, however it dies."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
