"""What `make test` says about a failed case, on a real-shaped submission
(the reference with catalogue bugs): `where:` names the student's line in
the function under test, the same line the grader's report names; no
`expected: dict` / `got: dict` lines."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core.assignment import Assignment
from grader.grading.run import expected
from grader.grading.run.config import RunConfig

from catalogue import build, canonical, mutants
from catalogue.build import OPS

ROOT = Path(__file__).resolve().parents[2]
HANDOUT = ROOT / "handout"
BUGS = [m for m in mutants.MUTANTS if m.name in ("summation_gradient_forgets_reshape",
                                                 "matmul_gradient_off_by_transpose")]
BUGGY_LINE = "return broadcast_to(out_grad, node.inputs[0].shape)"


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """A handout copy holding a submission with both bugs, and its `make test`-style run of Q2."""
    root = tmp_path_factory.mktemp("feedback") / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    edits = canonical.BASE + tuple(e for m in BUGS for e in m.edits)
    build.write_submission(root, build.apply_edits(build.reference_sources(), edits))
    (root / "data").symlink_to(ROOT / "data")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "--tb=short", "-k", "backward",
                          "-p", "no:cacheprovider"], cwd=root, env={**env, "OPENBLAS_NUM_THREADS": "1"},
                         capture_output=True, text=True, timeout=300)
    return root, run.stdout


def summation_line(root: Path) -> int:
    lines = (root / OPS).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("class Summation("))
    return next(i for i in range(start, len(lines)) if BUGGY_LINE in lines[i]) + 1


def test_make_test_names_the_students_line_in_the_function_under_test(student):
    root, out = student
    assert f"where: {OPS}:{summation_line(root)} in Summation.gradient: {BUGGY_LINE}; raised in " \
           f"ops_mathematic.py:" in out, out[-3000:]


def test_no_expected_dict_got_dict_lines(student):
    _, out = student
    assert "test_case[backward_matmul_2d]" in out and "wrong values at [1]" in out, out[-3000:]
    assert not re.search(r"^(expected|got):\s+(dict|list)$", out, re.M), out[-3000:]


@pytest.mark.sandbox
def test_make_test_and_the_grader_name_the_same_line(student):
    root, out = student
    files = {rel: root / rel for rel in Assignment.hw1().student_files}
    run = expected.run_graded(files, RunConfig(), questions=["backward"])["backward"]
    problem = run.outcomes["backward_summation_one_axis"].problem
    graders = problem[problem.index("(at ") + 4:-1]
    assert graders.startswith(f"{OPS}:{summation_line(root)} in Summation.gradient: ")
    block = out.split("test_case[backward_summation_one_axis]", 1)[1]
    assert f"where: {graders}\n" in block, (graders, block[:1500])


def test_a_case_checking_another_cases_value_says_the_same(student):
    """nn_epoch_ndl_test_error checks the value nn_epoch_ndl_mnist_full
    computed: the same where (as in the grader), and a traceback without
    the pytest frames of the case that raised it first."""
    root, _ = student
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "--tb=short", "-k", "nn_epoch_ndl",
                          "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True, timeout=600,
                         env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                              "OPENBLAS_NUM_THREADS": "1"})
    blocks = dict(re.findall(r"_ test_case\[(\w+)\] _+\n(.*?)(?=\n_{3,} test_case|\n=+ )", run.stdout, re.S))
    wheres = {name: re.search(r"^where: (.*)$", block, re.M).group(1) for name, block in blocks.items()}
    assert wheres["nn_epoch_ndl_test_error"] == wheres["nn_epoch_ndl_mnist_full"], wheres
    assert " in nn_epoch: " in wheres["nn_epoch_ndl_test_error"]
    assert "_pytest" not in run.stdout and "pluggy/" not in run.stdout, run.stdout[-3000:]
