"""benchmarks/bench_epoch.py's summary: each side's fastest round, scaled to
an epoch, their ratio, and the median and spread of the per-round ratios
`make bench` prints beside it."""
import pytest

from benchmarks import speed as bench
from benchmarks.bench_epoch import summary


def test_the_ratio_is_of_each_sides_fastest_round_and_the_median_is_reported_beside_it():
    # The third round is one a neighbour's load slowed (more on the needle side):
    # it moves the median of the ratios, not the fastest rounds.
    times = {"numpy": [1.0, 1.1, 1.2, 1.05], "needle": [1.3, 1.4, 2.4, 1.35]}
    got = summary(times, scale=10)
    assert got["numpy_s"] == pytest.approx(10.0) and got["needle_s"] == pytest.approx(13.0)
    assert got["ratio"] == pytest.approx(1.3)
    ratios = sorted([1.3, 1.4 / 1.1, 2.0, 1.35 / 1.05])
    assert got["ratio_median"] == pytest.approx((ratios[1] + ratios[2]) / 2)
    assert got["ratio_min"] == pytest.approx(ratios[0]) and got["ratio_max"] == pytest.approx(2.0)


def test_a_slower_needle_round_everywhere_raises_the_ratio():
    times = {"numpy": [1.0, 1.0], "needle": [1.6, 1.7]}
    assert summary(times, scale=1)["ratio"] == pytest.approx(1.6)
    assert summary(times, scale=1)["ratio"] > bench.EPOCH_TARGET


def test_the_epoch_target_is_the_agreed_one():
    assert bench.EPOCH_TARGET == 1.5
