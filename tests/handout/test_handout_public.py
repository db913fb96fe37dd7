"""The public tests against the committed handout and the reference, and a
student's `make test` in a copy of handout/ outside the repository."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grading.report.scoring import UNIT, max_scores
from grader.core.assignment import Assignment
from grader.handout.checks import NOT_IMPLEMENTED_RE, check_public_tests, keywords, question_of, run_pytest
from grader.handout.commands import differences
from grader.shipped.cases import CASES, QUESTION

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"
HANDOUT = ROOT / "handout"
DATA = (REFERENCE / "data").resolve()
STUDENT_FILES = ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py")
# In the full handout, a case may stop at the stub of a question it builds
# on before reaching its own: gradients run the op's forward (Q1) first,
# reverse AD calls find_topo_sort (Q3), softmax_loss is made of Q1 ops, and
# an epoch runs Q1 and Q2 code (and parse_mnist, Q5). The one-question
# variants of check_public_tests show each case reaches its own question.
BUILDS_ON = {"Q2": {"Q1"}, "Q4": {"Q1", "Q3"}, "Q5": {"Q1"}, "Q6": {"Q1", "Q2", "Q5"}}


def copy_of(tree: Path, dest: Path) -> Path:
    shutil.copytree(tree, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".venv", "data"))
    return dest


def test_committed_handout_is_fresh():
    assert differences(REFERENCE, HANDOUT) == []


def test_handout_tests_fail_with_not_implemented_naming_their_question(tmp_path):
    root = copy_of(HANDOUT, tmp_path / "handout")
    (root / "data").symlink_to(DATA)
    outcomes = run_pytest(root)
    assert len(outcomes) > 50
    for o in outcomes:
        match = NOT_IMPLEMENTED_RE.match(o.message)
        assert o.status == "failed" and match, f"{o.name}: {o.status} {o.message}"
        (question,) = question_of(o.name, keywords(Assignment.hw1()))
        assert match.group(1) in {question} | BUILDS_ON.get(question, set()), f"{o.name}: {o.message}"


def test_reference_passes_and_each_question_variant_fails_on_its_own_stub():
    assert check_public_tests(REFERENCE) == []


def test_a_test_that_needs_no_student_code_is_reported(tmp_path):
    src = copy_of(REFERENCE, tmp_path / "reference")
    (src / "data").symlink_to(DATA)
    tests = src / "tests/hw1/test_autograd_hw.py"
    tests.write_text(tests.read_text() + "\n\ndef test_given_add_forward():\n"
                     "    assert ndl.add_scalar(T(np.ones(2)), 1.0).numpy().sum() == 4\n")
    problems = check_public_tests(src, questions=("Q1",))
    assert problems == [f"{src}/tests/hw1::test_given_add_forward: should fail with NotImplementedError "
                        "in the handout, got passed",
                        f"{src}/tests/hw1::test_given_add_forward: should fail with NotImplementedError "
                        "naming Q1 in the handout with only Q1 stripped, got passed"]


def make_test(root: Path, *args):
    env = dict(os.environ, MNIST_DIR=str(DATA))
    env.pop("MAKEFLAGS", None)
    return subprocess.run(["make", "--no-print-directory", "test", f"PYTHON={sys.executable}", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def public_points() -> dict:
    """question key (and 'total') -> the grader's points of its public scored cases, as the table prints them."""
    scores, out = max_scores(Assignment.hw1().registry()), {}
    for c in CASES:
        if not c.hidden and not c.advisory:
            out[c.question] = out.get(c.question, 0) + round(scores[c.name] * UNIT)
    out["total"] = sum(out.values())
    return {k: f"{u / UNIT:.2f}".rstrip("0").rstrip(".") for k, u in out.items()}


def points_table(output: str) -> dict[str, str]:
    """question or 'total' -> the points column of the table (earned/public points)."""
    table = output.split("hw1 points", 1)[1]
    rows = re.findall(r"^(Q\d|total)\b.*?(\S+/[\d.]+)(?: \(public cases[^)]*\))?$", table, flags=re.M)
    return dict(rows)


@pytest.mark.slow
def test_student_make_test_outside_the_repository(tmp_path):
    root = copy_of(HANDOUT, tmp_path / "hw1")
    assert not any(parent == ROOT for parent in root.parents)
    run = make_test(root)  # exits 0 once the cases ran, whatever the points
    assert run.returncode == 0 and (root / "data/train-images-idx3-ubyte.gz").is_file()
    public = public_points()
    assert points_table(run.stdout) == {**{q.label: f"0/{public[q.key]}" for q in QUESTION.values()},
                                        "total": f"0/{public['total']}"}, run.stdout[-2000:]

    for rel in STUDENT_FILES:
        shutil.copyfile(REFERENCE / rel, root / rel)
    run = make_test(root)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    # A complete, correct solution: full marks for what the public cases can check, never x/100.
    assert points_table(run.stdout) == {**{q.label: f"{public[q.key]}/{public[q.key]}" for q in QUESTION.values()},
                                        "total": f"{public['total']}/{public['total']}"}
    assert f"total {public['total']}/{public['total']} (public cases)" in " ".join(run.stdout.split())
    hidden = 100 - float(public["total"])
    assert f"hidden cases: {hidden:.2f}".rstrip("0").rstrip(".") + " more points are graded on hidden cases" \
        in run.stdout

    run = make_test(root, "Q=backward")
    table = points_table(run.stdout)
    assert table["Q2"] == f"{public['backward']}/{public['backward']}" and table["Q1"] == f"-/{public['forward']}"
    assert table["total"] == f"{public['backward']}/{public['backward']}" and "(public cases of Q2)" in run.stdout
