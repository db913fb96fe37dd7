"""`where:` in a failed case's feedback names the student's line: the
innermost frame in the function the case exercises (from its description,
"Summation.gradient: ..."), else the innermost frame in the student's own
code, skipping the code given with the assignment, with the line's text.
Graded through the real sandboxed worker on catalogue-style submissions."""

from pathlib import Path

import pytest
from catalogue import build, canonical, mutants
from catalogue.build import AUTOGRAD, OPS, Body

from grader.core.assignment import Assignment
from grader.core.markers import given_functions
from grader.grading.report import results as report
from grader.grading.report.orchestrate import grade_submission
from grader.grading.run import expected
from grader.grading.run.config import RunConfig

pytestmark = pytest.mark.sandbox

FORGETS_RESHAPE = next(m for m in mutants.MUTANTS if m.name == "summation_gradient_forgets_reshape")
BUGGY_LINE = "return broadcast_to(out_grad, node.inputs[0].shape)"
BROADCAST_LINE = (
    "return array_api.broadcast_to(a, self.shape)"  # the reference's BroadcastTo.compute, where numpy raises
)


def write(dest: Path, edits) -> Path:
    sources = build.apply_edits(build.reference_sources(), canonical.BASE + tuple(edits))
    return build.write_submission(dest, sources)


def line_of(root: Path, rel: str, text: str, after: str = "") -> int:
    """1-based number of the first line holding `text` (after the line holding `after`)."""
    lines = (root / rel).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i in range(start, len(lines)) if text in lines[i]) + 1


def problems(root: Path, question: str) -> dict:
    """case name -> the worker's problem text, for one question's worker on `root`."""
    files = {rel: root / rel for rel in Assignment.hw1().student_files}
    run = expected.run_graded(files, RunConfig(), questions=[question])[question]
    return {name: outcome.problem for name, outcome in run.outcomes.items()}


@pytest.fixture(scope="module")
def forgets_reshape(tmp_path_factory):
    root = write(tmp_path_factory.mktemp("where") / "sum", FORGETS_RESHAPE.edits)
    return root, grade_submission(root)


def test_where_names_the_line_in_the_function_under_test(forgets_reshape):
    """Before: `where: ops_mathematic.py:256 in compute`, the correct BroadcastTo.compute."""
    root, rep = forgets_reshape
    line = line_of(root, OPS, BUGGY_LINE, after="class Summation(")
    compute = line_of(root, OPS, BROADCAST_LINE, after="class BroadcastTo(")
    case = next(c for c in rep.cases if c.name == "backward_summation_one_axis")
    assert not case.passed
    assert (
        f"(at {OPS}:{line} in Summation.gradient: {BUGGY_LINE}; "
        f"raised in ops_mathematic.py:{compute} in BroadcastTo.compute)" in case.output
    ), case.output
    assert f"{OPS}:{line} in Summation.gradient: {BUGGY_LINE}" in report.markdown(rep)


def test_where_follows_the_error_back_to_the_students_caller(forgets_reshape):
    """No frame of the function a case names (the loss's gradient runs in the
    case's own reverse pass): the innermost student frame, and the student's
    function that called it."""
    root, rep = forgets_reshape
    line = line_of(root, OPS, BUGGY_LINE, after="class Summation(")
    compute = line_of(root, OPS, BROADCAST_LINE, after="class BroadcastTo(")
    by_name = {c.name: c.output for c in rep.cases}
    assert (
        f"(at {OPS}:{compute} in BroadcastTo.compute: {BROADCAST_LINE}; called from ops_mathematic.py:{line} "
        f"in Summation.gradient)" in by_name["softmax_loss_ndl_gradient"]
    )
    # nn_epoch is the function under test: its line, then where the error came from.
    assert " in nn_epoch: " in by_name["nn_epoch_ndl_mnist_full"]
    assert (
        f"raised in ops_mathematic.py:{compute} in BroadcastTo.compute, called from ops_mathematic.py:{line} "
        f"in Summation.gradient)" in by_name["nn_epoch_ndl_mnist_full"]
    )


def test_where_skips_code_given_with_the_assignment(tmp_path):
    """The error is raised in given code (Tensor's constructor, in autograd.py):
    `where` names the student's line that called it."""
    bad = "return Tensor([[1.0, 2.0], [3.0]])"
    root = write(tmp_path / "given", [Body(OPS, "Negate.gradient", bad)])
    problem = problems(root, "backward")["backward_negate"]
    line = line_of(root, OPS, bad)
    assert problem.startswith("ValueError: "), problem
    assert problem.endswith(f"(at {OPS}:{line} in Negate.gradient: {bad})"), problem


def test_where_without_a_named_function_is_the_innermost_student_frame(tmp_path):
    """Topological-sort cases name no function: the innermost frame of the
    student's code, and the student's function that called it."""
    bad = "visited.add(list(node.inputs))"
    root = write(tmp_path / "topo", [Body(AUTOGRAD, "topo_sort_dfs", f"{bad}\ntopo_order.append(node)")])
    problem = problems(root, "topo_sort")["topo_sort_chain"]
    line = line_of(root, AUTOGRAD, bad)
    caller = line_of(root, AUTOGRAD, "topo_sort_dfs(", after="def find_topo_sort(")
    assert problem.startswith("TypeError: unhashable type: 'list'"), problem
    assert problem.endswith(
        f"(at {AUTOGRAD}:{line} in topo_sort_dfs: {bad}; called from autograd.py:{caller} in find_topo_sort)"
    ), problem


def test_given_functions_are_those_without_student_code():
    text = (build.REFERENCE / OPS).read_text()
    given = given_functions(text, OPS)
    assert {"BroadcastTo.__init__", "broadcast_to", "EWiseAdd.compute", "summation"} <= set(given)
    assert not {"Summation.gradient", "BroadcastTo.compute", "_sum_to_shape"} & set(given)
    simple_ml = given_functions((build.REFERENCE / "apps/simple_ml.py").read_text(), "apps/simple_ml.py")
    assert "parse_mnist.read_idx" not in simple_ml, "a function inside a solution block is the student's"
