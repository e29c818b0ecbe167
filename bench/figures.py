"""What a benchmark run produces: figures, each next to its ceiling from the same run."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Figure:
    section: str
    name: str
    value: float | None
    unit: str
    p50_ms: float | None = None
    p99_ms: float | None = None
    ceiling_name: str = ""
    ceiling: float | None = None
    target: str = ""
    met: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.ceiling:
            return None
        return self.value / self.ceiling


@dataclass
class Run:
    machine: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    figures: list[Figure] = field(default_factory=list)
    sweeps: dict[str, list[tuple[float, float | None, float | None]]] = field(default_factory=dict)
    """name -> [(offered req/s, p50 ms, p99 ms)] for the latency plot."""
    notes: list[str] = field(default_factory=list)

    def add(self, figure: Figure) -> Figure:
        self.figures.append(figure)
        print(
            f"  {figure.section} | {figure.name}: {figure.value} {figure.unit} "
            f"p50={figure.p50_ms} p99={figure.p99_ms} ratio={figure.ratio}",
            flush=True,
        )
        return figure
