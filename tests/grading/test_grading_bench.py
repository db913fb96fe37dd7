"""`make bench`'s grading-overhead figure runs every case function in one
plain process (benchmarks/bench_cases.py): it must find the assignment's
cases package wherever the grader keeps it, and a library whose cases raise
must stop the figure rather than time the raising."""

import shutil

import pytest

from benchmarks import speed as bench
from grader import REFERENCE

pytestmark = pytest.mark.slow


def test_the_plain_process_runs_every_case_function_of_the_reference():
    assert bench._in_process_cases() > 0


def test_a_library_whose_cases_raise_stops_the_figure(tmp_path):
    broken = tmp_path / "broken"
    for sub in ("python", "apps"):
        shutil.copytree(REFERENCE / sub, broken / sub, ignore=shutil.ignore_patterns("__pycache__"))
    ops = broken / "python" / "needle" / "ops" / "ops_mathematic.py"
    ops.write_text(
        ops.read_text() + "\n\ndef _broken(*args):\n    raise ValueError('broken')\n\n\nEWiseAdd.compute = _broken\n"
    )
    with pytest.raises(RuntimeError, match=r"case\(s\) raised on .*broken"):
        bench._in_process_cases(broken)
