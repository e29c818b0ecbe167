"""CEL filters that iterate a known number of times, for the filter budget's tests."""

from __future__ import annotations

TEN = "[0,1,2,3,4,5,6,7,8,9]"


def nested(levels: int, body: str = "true", macro: str = "all") -> str:
    """``levels`` comprehensions over ten elements, one inside the other, around ``body``:
    10^levels evaluations of it."""
    expression = body
    for level in range(levels):
        expression = f"{TEN}.{macro}(v{level}, {expression})"
    return expression
