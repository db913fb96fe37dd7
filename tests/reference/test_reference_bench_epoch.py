"""benchmarks/bench_epoch.py's summary: medians of the timed rounds, the warm-up
round dropped, and the spread of the per-round ratios `make bench` prints."""
import pytest

from benchmarks import speed as bench
from benchmarks.bench_epoch import summary


def test_summary_drops_the_warm_up_round_and_reports_the_spread():
    times = {"numpy": [9.0, 1.0, 2.0, 1.0], "needle": [1.0, 1.1, 2.6, 1.2]}
    got = summary(times)
    assert got["numpy_s"] == 1.0 and got["needle_s"] == 1.2
    assert got["ratio"] == pytest.approx(1.2)
    assert got["ratio_min"] == pytest.approx(1.1) and got["ratio_max"] == pytest.approx(1.3)


def test_the_epoch_target_is_the_agreed_one():
    assert bench.EPOCH_TARGET == 1.5
