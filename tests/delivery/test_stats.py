"""The rollups' latency bins (``delivery.stats``): exact below 32 ms, then within 5%."""

from __future__ import annotations

from hookline.delivery import stats


def test_latency_bins_are_exact_then_within_five_percent() -> None:
    for ms in range(stats.EXACT_BELOW_MS):
        assert stats.bin_value(stats.latency_bin(ms)) == ms
    for ms in (32, 33, 100, 999, 1000, 4321, 15000, 60000):
        assert abs(stats.bin_value(stats.latency_bin(ms)) - ms) <= 0.026 * ms
