"""Small statistics helpers shared by the harness pieces."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(sorted_values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile of already sorted values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(0, min(len(sorted_values) - 1, round(pct / 100 * len(sorted_values) + 0.5) - 1))
    return float(sorted_values[rank])
