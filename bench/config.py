"""How long and how often to measure; ``BENCH_QUICK=1`` shrinks everything to a smoke run."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Plan:
    quick: bool
    duration: float
    """Seconds per wrk run."""
    warmup: float
    rounds: int
    """Every figure is measured once per round, rounds interleaved; the table shows medians."""
    connections: int
    small: int
    """Contacts in the account for the main API figures."""
    large: int
    """Contacts in the account for the size figures."""
    sweep: tuple[float, ...]
    """Fractions of the measured maximum offered in the open-loop latency sweep."""
    sweep_seconds: float
    delivery_events: int
    latency_seconds: float
    """Seconds of offered load for commit-to-receipt latency."""
    probe_seconds: float
    """Seconds per probe of the search for the sustained POST + delivery rate."""
    scale_events: int


FULL = Plan(
    quick=False,
    duration=6.0,
    warmup=1.0,
    rounds=3,
    connections=64,
    small=10_000,
    large=1_000_000,
    sweep=(0.25, 0.5, 0.75, 0.9, 1.0, 1.2),
    sweep_seconds=5.0,
    delivery_events=6_000,
    latency_seconds=10.0,
    probe_seconds=4.0,
    scale_events=6_000,
)

QUICK = replace(
    FULL,
    quick=True,
    duration=2.0,
    warmup=0.5,
    rounds=1,
    small=2_000,
    large=20_000,
    sweep=(0.5, 1.0),
    sweep_seconds=2.0,
    delivery_events=800,
    latency_seconds=3.0,
    probe_seconds=1.5,
    scale_events=800,
)


def current_plan() -> Plan:
    return QUICK if os.environ.get("BENCH_QUICK", "") not in ("", "0") else FULL
