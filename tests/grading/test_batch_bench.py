"""`make bench`'s grade-batch speed-up (benchmarks/batch.py): --jobs 1's
fastest run over --jobs 2's, the runs interleaved so that each side is
first and last alike."""

import pytest

from benchmarks import batch as bench


def test_the_speed_up_is_of_each_sides_fastest_run():
    # the second --jobs 2 run is one a neighbour's load slowed: it moves no figure
    times = {1: [10.6, 10.2, 10.4], 2: [5.3, 7.9, 5.1]}
    assert bench.speedup(times) == pytest.approx(10.2 / 5.1)


def test_a_slower_jobs_2_everywhere_misses_the_target():
    assert bench.speedup({1: [10.0, 10.1, 10.2], 2: [5.6, 5.7, 5.8]}) < bench.LOCAL_TARGET


def test_the_order_runs_each_side_three_times_and_starts_and_ends_with_different_sides():
    assert sorted(bench.ORDER) == [1, 1, 1, 2, 2, 2]
    assert bench.ORDER[0] != bench.ORDER[-1]
