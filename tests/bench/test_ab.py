"""``bench.ab``: variants name a build and its settings; each build's source is the one named."""

from __future__ import annotations

from pathlib import Path

from bench.ab import ROOT, Variant, _table, source_tree

from bench import wrk


def test_a_variant_names_a_revision_and_its_settings() -> None:
    variant = Variant.parse("B=main:HOOKLINE_LOG_LEVEL=INFO,HOOKLINE_WORKERS=2")
    assert variant == Variant("B", "main", {"HOOKLINE_LOG_LEVEL": "INFO", "HOOKLINE_WORKERS": "2"})
    assert Variant.parse("A=") == Variant("A", ".", {})


def test_each_variant_runs_the_source_it_names(tmp_path: Path) -> None:
    assert source_tree(".", tmp_path) == ROOT / "src"
    exported = source_tree("HEAD", tmp_path)
    assert exported.is_relative_to(tmp_path)
    assert (exported / "hookline" / "__init__.py").read_bytes() == (
        ROOT / "src" / "hookline" / "__init__.py"
    ).read_bytes()
    by_hand = tmp_path / "by-hand"
    (by_hand / "src").mkdir(parents=True)
    assert source_tree(str(by_hand), tmp_path) == by_hand / "src"


def test_the_table_puts_each_variant_against_the_first() -> None:
    def result(rps: float) -> wrk.Result:
        return wrk.Result(rps, 1.0, 2.0, 3.0, 100, 0, 0)

    runs = {
        ("POST", "A"): [(600.0, result(1000)), (620.0, result(1000)), (610.0, result(1000))],
        ("POST", "B"): [(300.0, result(2000)), (310.0, result(2000)), (305.0, result(2000))],
    }
    rows = _table(runs, ["POST"], ["A", "B"]).splitlines()
    assert rows[2].startswith("| POST | A | 610 | 1.00x | 1,000 |")
    assert rows[3].startswith("| POST | B | 305 | 0.50x | 2,000 |")
