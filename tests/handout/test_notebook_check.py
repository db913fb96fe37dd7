"""hw1_check.py, the notebook's helper, called directly in a copy of the
handout: the messages a student sees when something is off."""
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANDOUT = ROOT / "handout"


@pytest.fixture
def student(tmp_path, monkeypatch):
    """A copy of the handout as the working directory, and its hw1_check module."""
    root = tmp_path / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    (root / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(root)
    spec = importlib.util.spec_from_file_location("student_hw1_check", root / "hw1_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return root, module


def message(error) -> list[str]:
    return error._render_traceback_()


def test_stub_failure_is_summarised_in_three_lines(student):
    _, check = student
    with pytest.raises(check.CasesFailed) as info:
        check.run_cases("topo_sort")
    headline, first, hint = message(info.value)
    assert headline == "CasesFailed: Q3 topo_sort: 5 of 5 cases failed"
    assert first == "first: topo_sort_chain: NotImplementedError: Q3: find_topo_sort"
    assert hint.startswith("full report: python -m pytest -k topo_sort")


def test_a_syntax_error_names_its_file_and_line(student):
    root, check = student
    autograd = root / "python/needle/autograd.py"
    line = len(autograd.read_text().splitlines()) + 1
    autograd.write_text(autograd.read_text() + "def broken(:\n")
    with pytest.raises(check.CasesFailed) as info:
        check.run_cases("forward")
    assert message(info.value)[:2] == [
        "CasesFailed: Q1 forward: the cases could not run (pytest exit status 2)",
        "first: tests.hw1.test_cases: SyntaxError: invalid syntax "
        f"(python/needle/autograd.py, line {line})"]


def test_outside_the_homework_folder_says_where_to_run(student, tmp_path, monkeypatch):
    _, check = student
    monkeypatch.chdir(tmp_path)
    with pytest.raises(check.NotebookError) as info:
        check.run_cases("forward")
    assert message(info.value) == [f"NotebookError: {tmp_path} has no tests/hw1: run the notebook from the "
                                   "hw1 folder (in Colab, set HW1_DIR in the setup cell)"]


def test_unknown_question_lists_the_known_ones(student):
    _, check = student
    with pytest.raises(check.NotebookError) as info:
        check.run_cases("forwards")
    assert str(info.value) == ("unknown question 'forwards'; use one of forward, backward, topo_sort, "
                               "compute_gradient, softmax_loss_ndl, nn_epoch_ndl")


@pytest.mark.slow
def test_the_first_failure_shows_its_likely_cause(student):
    """A known bug (Negate.gradient passing out_grad through): the cell's
    `first:` line has the grader's `Likely cause:` line under it."""
    root, check = student
    shutil.copytree(ROOT / "reference" / "python", root / "python", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    ops = root / "python/needle/ops/ops_mathematic.py"
    right = "return negate(out_grad)"
    assert ops.read_text().count(right) == 1, "the reference's Negate.gradient changed: update this test"
    ops.write_text(ops.read_text().replace(right, "return out_grad"))
    with pytest.raises(check.CasesFailed) as info:
        check.run_cases("backward")
    lines = message(info.value)
    assert lines[1].startswith("first: backward_negate") and "wrong values" in lines[1], lines
    assert lines[2].startswith("Likely cause: Negate.gradient passes out_grad through unchanged"), lines
    assert lines[3].startswith("full report: python -m pytest -k backward")
