"""Webhook filters: CEL (Common Expression Language) expressions over the delivered body.

A filter is compiled when a webhook is created or changed (a compile error is a 422 naming
``filter``, with the parser's message), and again, once per distinct expression, by the worker
that fans events out (``compiled`` caches the program). At fan-out, an event becomes a delivery
to a filtered webhook only when the expression evaluates to exactly ``true`` for
``{"event": body}``; any run-time error (a missing field, a type mismatch) counts as false.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

MAX_FILTER_LENGTH = 1024
_CACHE_SIZE = 1024


class FilterError(ValueError):
    """The expression does not compile; the message is the parser's."""


@functools.lru_cache(maxsize=_CACHE_SIZE)
def compiled(expression: str) -> Any:
    # Imported on first use: the package's __init__ also loads its command-line tool's
    # dependencies (0.6 s), which a worker or API process without filters need not pay.
    import cel

    try:
        return cel.compile(expression)
    except ValueError as exc:
        raise FilterError(str(exc)) from None


def check_filter(expression: str) -> str:
    """``expression`` if it compiles (and is not blank or too long); ``FilterError`` otherwise."""
    if not expression.strip():
        raise FilterError("filter must not be blank; send null for no filter")
    if len(expression) > MAX_FILTER_LENGTH:
        raise FilterError(f"filter must be at most {MAX_FILTER_LENGTH} characters")
    compiled(expression)
    return expression


def matches(expression: str, body: Mapping[str, Any]) -> bool:
    """Whether the event passes the filter: the expression is exactly ``true``. A stored
    expression that no longer compiles (a library upgrade) passes nothing, like any error."""
    try:
        result = compiled(expression).execute({"event": dict(body)})
    except Exception:
        return False
    return result is True
