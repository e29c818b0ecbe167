"""The filter process: ``python -m hookline.delivery.filter_child MEMORY_BYTES``, started by
``filters.FilterJudge``.

It loads the interpreter once, at the lowest CPU priority, then forks the process that
evaluates, with its address space bounded to ``MEMORY_BYTES``. That one says ``ready PID``,
then answers each line ``[expression, body]`` (JSON) on the shared standard input with ``1``
(the expression is exactly true for ``{"event": body}``) or ``0`` (false or any error). The
parent kills it when an answer is late; it also ends when its memory runs out. Either way the
first process forks the next one, which says ``ready`` again: a new evaluator in milliseconds,
not the interpreter's start. When the input ends, both exit.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any


def matches(expression: str, body: Any) -> bool:
    # Imported here only: cel holds the GIL for a whole evaluation, so no other process
    # evaluates filters.
    import cel

    try:
        return cel.compile(expression).execute({"event": body}) is True
    except MemoryError:
        raise  # the limit: this process ends, and its parent counts the evaluation as cut
    except Exception:
        return False


def evaluate_lines(memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    out = sys.stdout.buffer
    out.write(b"ready %d\n" % os.getpid())
    out.flush()
    for line in sys.stdin.buffer:
        expression, body = json.loads(line)
        out.write(b"1\n" if matches(expression, body) else b"0\n")
        out.flush()


def main() -> None:
    memory_bytes = int(sys.argv[1])
    os.nice(19)
    matches("true", {})  # the interpreter loaded once, before any fork
    while True:
        pid = os.fork()
        if pid == 0:
            # Only the end of the input exits 0: a MemoryError must fork the next evaluator.
            status = 1
            try:
                evaluate_lines(memory_bytes)
                status = 0
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return  # the input ended


if __name__ == "__main__":
    main()
