"""The grader's own process gets the numeric environment its workers get
(grader/core/blas.py): one BLAS thread and no huge pages for numpy."""

import os
import subprocess
import sys

import pytest

HUGEPAGES = """
import numpy
core = getattr(numpy, "_core", None) or numpy.core
print(os.environ.get("OPENBLAS_NUM_THREADS"), core.multiarray._get_madvise_hugepage())
"""


def numeric_state(before: str) -> str:
    """What numpy is told in a fresh process that runs `before` first, started with huge pages on and 4 threads."""
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "1", "OPENBLAS_NUM_THREADS": "4"}
    code = "import os\n" + before + HUGEPAGES
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_without_it_numpy_keeps_the_callers_settings():  # the control: the checks below could fail
    assert numeric_state("").split() == ["4", "True"]


LAUNCH = """
from grader.cli import main
try:
    main(["--version"])
except SystemExit:  # argparse's way out of --version
    pass
"""


def test_the_command_line_settles_them_before_numpy_loads():
    assert numeric_state(LAUNCH).split()[-2:] == ["1", "False"]


@pytest.mark.parametrize("first", ["import numpy\n", ""])
def test_use_here_turns_huge_pages_off_even_after_numpy_loaded(first):
    assert numeric_state(first + "from grader.core import blas\nblas.use_here()\n").split() == ["1", "False"]
