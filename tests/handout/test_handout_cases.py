"""The handout's cases are the grader's public cases: the points a student
sees after `make test` are the grader's points on the same submission's
public cases; hidden rows and their values never ship; the shipped tables
agree with the registry; the comparison code is the grader's."""
import dataclasses
import importlib.util
import inspect
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.shipped import tolerance
from grader.shipped import checks
from grader.shipped import compare
from grader.handout import cases as handout_cases
from grader.shipped.cases import CASES, QUESTION
from grader.core.assignment import Assignment
from grader.cli import main
from grader.grading.report.orchestrate import grade_submission
from grader.grading.report.scoring import UNIT, max_scores
from grader.handout.commands import FileState, same_file
from grader.handout.build import HandoutError, build_tree
from grader.core.markers import BEGIN_HIDDEN

HW1 = Assignment.hw1().registry()

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"
HANDOUT = ROOT / "handout"
SHIPPED = HANDOUT / Assignment.hw1().cases_dest
DATA = (REFERENCE / "data").resolve()
# A partly right Summation: a tuple of axes sums over its first axis only.
SUMMATION_RIGHT = "return a.sum(axis=self.axes)"
SUMMATION_WRONG = "return a.sum(axis=None if self.axes is None else self.axes[0])"


def table_rows(output: str) -> dict:
    """question label -> (cases passed, points) from the last table printed."""
    table = output.rsplit(" hw1 points ", 1)[1]
    return {m[0]: (m[1], m[2]) for m in re.findall(r"^(Q\d) \w+\s+(\S+|not run)\s+(\S+)/[\d.]+$", table, re.M)}


def units(points):
    return round(points * UNIT)


def fmt(u):
    return f"{u / UNIT:.2f}".rstrip("0").rstrip(".")


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    """The reference with Q2 stubbed and Summation wrong on tuples of axes."""
    root = tmp_path_factory.mktemp("partial") / "hw1"
    build_tree(REFERENCE, root, strip_questions=frozenset({"Q2"}))
    ops = root / "python/needle/ops/ops_mathematic.py"
    text = ops.read_text()
    assert text.count(SUMMATION_RIGHT) == 1, "the reference's Summation changed: update this test"
    ops.write_text(text.replace(SUMMATION_RIGHT, SUMMATION_WRONG))
    (root / "data").symlink_to(DATA)
    return root


@pytest.mark.slow
def test_local_points_are_the_graders_points_on_the_public_cases(partial):
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "-q", "--tb=no", "-p", "no:cacheprovider"],
                         cwd=partial, capture_output=True, text=True, timeout=600,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"})
    local = table_rows(run.stdout)
    report = grade_submission(partial)
    graded = {}
    for c in report.cases:
        if not c.hidden and not c.advisory:
            label = QUESTION[c.question].label
            passed, total, earned = graded.get(label, (0, 0, 0))
            graded[label] = (passed + c.passed, total + 1, earned + units(c.score))
    assert local == {label: (f"{p}/{t}", fmt(u)) for label, (p, t, u) in graded.items()}, run.stdout[-3000:]
    total = re.search(r"^total\s+(\S+)/(\S+) \(public cases\)$", run.stdout.rsplit(" hw1 points ", 1)[1], re.M)
    assert total and total.group(1) == fmt(sum(u for _, _, u in graded.values()))
    public = [c for c in CASES if not c.hidden and not c.advisory]
    assert total.group(2) == fmt(sum(units(max_scores(HW1)[c.name]) for c in public))
    # The submission is partial: some public cases pass and some fail, in Q1 itself.
    assert local["Q2"][1] == "0" and local["Q3"] == ("5/5", "12.5")
    passed, total = map(int, local["Q1"][0].split("/"))
    assert 0 < passed < total
    # The last lines: the hidden cases and the advisory cases, named as the grader does.
    hidden = [c for c in CASES if c.hidden and c.question == "forward"]
    assert f"Q1 {len(hidden)} cases, {fmt(sum(units(max_scores(HW1)[c.name]) for c in hidden))} points" \
        in run.stdout.splitlines()[-2]
    advisory_passed = sum(c.passed for c in report.cases if c.advisory)
    assert run.stdout.splitlines()[-1] == (f"Beyond the assignment (no points): {advisory_passed} of "
                                           f"{sum(c.advisory for c in CASES)} advisory cases passed.")


def load_conftest():
    spec = importlib.util.spec_from_file_location("handout_conftest_cases", HANDOUT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


POINTS = {"questions": [{"label": "Q1", "key": "forward", "points": 10, "hidden_cases": 2, "hidden_points": 4.25},
                        {"label": "Q3", "key": "topo_sort", "points": 20, "hidden_cases": 1, "hidden_points": 5},
                        {"label": "Q6", "key": "nn_epoch_ndl", "points": 10, "hidden_cases": 0,
                         "hidden_points": 0}],
          "cases": {"forward_log": 2.5, "forward_exp": 3.25, "forward_log_float32": 0.0,
                    "topo_sort_chain": 5.0, "topo_sort_diamond": 10.0, "nn_epoch_ndl_relu_forward": 10.0}}


def test_points_table_golden():
    conftest = load_conftest()
    passed = {"forward_log": True, "forward_exp": False, "forward_log_float32": True,
              "topo_sort_chain": True, "topo_sort_diamond": True, "not_a_case": True}
    assert conftest.points_table(passed, POINTS) == [
        "question                cases passed        points",
        "Q1 forward                       1/2      2.5/5.75",
        "Q3 topo_sort                     2/2         15/15",
        "Q6 nn_epoch_ndl              not run          -/10",
        "total                                   17.5/20.75 (public cases of Q1, Q3)",
        "hidden cases: 9.25 more points are graded on hidden cases (Q1 2 cases, 4.25 points; "
        "Q3 1 case, 5 points); your grade can differ only there.",
        "Beyond the assignment (no points): 1 of 1 advisory cases passed."]
    everything = {name: True for name in POINTS["cases"]}
    assert conftest.points_table(everything, POINTS)[-4:-1] == [
        "Q6 nn_epoch_ndl                  1/1         10/10",
        "total                                  30.75/30.75 (public cases)",
        "hidden cases: 9.25 more points are graded on hidden cases (Q1 2 cases, 4.25 points; "
        "Q3 1 case, 5 points); your grade can differ only there."]
    assert conftest.points_table({"not_a_case": True}, POINTS) == []
    assert conftest.case_of("tests/hw1/test_cases.py::test_case[forward_log]") == "forward_log"
    assert conftest.case_of("tests/hw1/test_autograd_hw.py::submit_forward") is None


def test_shipped_points_are_the_graders():
    shipped = json.loads((SHIPPED / "points.json").read_text())
    assert shipped == handout_cases.points_table(HW1)
    scores = max_scores(HW1)
    public = [c for c in CASES if not c.hidden]
    assert shipped["cases"] == {c.name: scores[c.name] for c in public}
    for q in shipped["questions"]:
        hidden = sum(units(scores[c.name]) for c in CASES if c.question == q["key"] and c.hidden)
        public_units = sum(units(shipped["cases"][n]) for n in shipped["cases"] if n.startswith(q["key"] + "_"))
        assert public_units + hidden == q["points"] * UNIT == units(q["hidden_points"]) + public_units


MODULES = {"forward": "forward", "backward": "backward", "topo_sort": "topo", "compute_gradient": "autodiff",
           "softmax_loss_ndl": "softmax", "nn_epoch_ndl": "nn"}


def test_no_hidden_case_ships():
    for c in CASES:
        module = (SHIPPED / f"{MODULES[c.question]}.py").read_text()
        row = f'("{c.name.removeprefix(c.question + "_")}", '
        assert (row in module) != c.hidden, f"{c.name}: hidden={c.hidden}, its row shipped: {row in module}"
        assert BEGIN_HIDDEN not in module
    stems = {p.name.split(".")[0] for p in (SHIPPED / "expected").glob("*.json")}
    assert stems == {c.value_key for c in CASES if not c.hidden}
    hidden_functions = ("def long_chain", "def reused_many_times", "def wide_fan_in", "def relu_backward",
                        "def epoch_mnist_subset", "def explicit_out_grad", "def second_order_cubic")
    shipped = "".join(p.read_text() for p in SHIPPED.glob("*.py"))
    assert not [f for f in hidden_functions if f in shipped]


def test_shipped_registry_is_the_public_part_of_the_graders():
    code = ("import sys; sys.path.insert(0, 'tests/hw1'); import hw1_cases; "
            "print(' '.join(c.name for c in hw1_cases.CASES))")
    run = subprocess.run([sys.executable, "-c", code], cwd=HANDOUT, capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == [c.name for c in CASES if not c.hidden], run.stderr


def test_comparison_code_ships_as_the_grader_has_it():
    """The shipped package imports only itself, so each copy is the
    grader's file byte for byte after its generated-file label."""
    for module in (checks, compare, tolerance):
        original = Path(inspect.getsourcefile(module))
        copy = (SHIPPED / original.name).read_text()
        assert copy == f"# Generated from grader/shipped/{original.name} by `make handout`; do not edit.\n" \
            + original.read_text()
        assert not re.search(r"^\s*(from|import) grader\b", copy, re.M)
    assert "from .compare import " in (SHIPPED / "checks.py").read_text()


def test_a_public_case_checking_a_hidden_value_stops_the_build(tmp_path, monkeypatch, stub_client):
    broken = [dataclasses.replace(c, hidden=True) if c.name == "forward_log" else c for c in HW1.cases]
    monkeypatch.setattr(Assignment, "registry", lambda self: dataclasses.replace(HW1, cases=tuple(broken)))
    with pytest.raises(HandoutError, match="public cases check forward_log, a hidden case's value"):
        build_tree(REFERENCE, tmp_path / "h")


def test_a_question_keyword_selects_that_questions_cases_only(tmp_path):
    root = tmp_path / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "--collect-only", "-q", "-k", "forward",
                          "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True, timeout=120)
    selected = re.findall(r"test_case\[(\w+)\]", run.stdout)
    assert selected == [c.name for c in CASES if c.question == "forward" and not c.hidden], run.stdout[-2000:]
    assert "nn_epoch_ndl_relu_forward" in (SHIPPED / "points.json").read_text()  # a substring match it skips


def test_make_handout_refreshes_stale_reference_cases_and_check_handout_leaves_them(tmp_path, stub_client, capsys):
    """The reference's copy of the public cases is a git-ignored build
    product: `make handout` rewrites a stale one; check-handout does not judge it."""
    src = tmp_path / "reference"
    shutil.copytree(REFERENCE, src, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "handout"
    assert main(["handout", str(src), str(out), "--skip-tests"]) == 0
    (src / Assignment.hw1().cases_dest / "points.json").write_text("{}\n")
    capsys.readouterr()
    assert main(["check-handout", str(src), str(out)]) == 0
    assert main(["handout", str(src), str(out), "--skip-tests"]) == 0
    assert "refreshed from grader/shipped/cases" in capsys.readouterr().out
    assert json.loads((src / Assignment.hw1().cases_dest / "points.json").read_text()) == handout_cases.points_table(HW1)


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def test_expected_arrays_equal_within_rounding_are_not_stale():
    rel = f"{Assignment.hw1().cases_dest}/expected/forward_log_0.npy"
    base = FileState(npy([1.0, 2.0, 3.0]), False)
    assert same_file(rel, base, FileState(npy([1.0, 2.0, 3.0 + 1e-12]), False))
    assert not same_file(rel, base, FileState(npy([1.0, 2.0, 3.01]), False))
    assert not same_file(rel, base, FileState(npy([1.0, 2.0]), False))
    assert not same_file(rel, base, FileState(npy(np.asarray([1.0, 2.0, 3.0], dtype=np.float32)), False))
    assert not same_file(rel, base, FileState(b"not an array", False))
    assert not same_file("tests/hw1/other.npy", base, FileState(npy([1.0, 2.0, 3.0 + 1e-12]), False))



def test_known_bugs_values_equal_within_rounding_are_not_stale():
    """causes.json holds the known bugs' values on the public inputs: computed on
    another CPU they differ in the last bits, and that copy is not stale."""
    rel = f"{Assignment.hw1().cases_dest}/causes.json"

    def causes(value, bugs=("exp_sign",), message="Exp.gradient has the wrong sign"):
        doc = {"bugs": {"exp_sign": {"message": message, "shape_tells": False}},
               "cases": {"forward_exp": [{"bugs": list(bugs), "value": {"array": [[value, 2]], "dtype": "float32"}}]}}
        return FileState(json.dumps(doc).encode(), False)

    base = causes(0.18001030385494232)
    assert same_file(rel, base, causes(0.18001031875610352))  # float32's last bit
    assert not same_file(rel, base, causes(0.1801))
    assert not same_file(rel, base, causes(0.18001030385494232, bugs=("exp_sign", "exp_of_input")))
    assert not same_file(rel, base, causes(0.18001030385494232, message="Exp.gradient forgets out_grad"))
    assert not same_file(rel, base, causes(True))
    assert not same_file(rel, base, FileState(b"{not json", False))
    assert not same_file("tests/hw1/hw1_cases/points.json", base, causes(0.18001031875610352))


def test_smaller_inputs_ship_for_public_cases_only_and_are_the_graders():
    """smaller.json holds the grader's candidates of each public shrinkable
    case (never a hidden case's), with the reference's values on them."""
    from grader.grading.explain.shrink import candidates as shrink_candidates, reference as shrink_reference

    shipped = json.loads((SHIPPED / handout_cases.SMALLER).read_text())
    public = [c for c in CASES if not c.hidden and shrink_reference.shrinkable(c)]
    assert sorted(shipped) == sorted(c.name for c in public)
    for case in public:
        ids = [c.id for c in shrink_candidates.candidates(case)]
        assert [e["entry"]["id"] for e in shipped[case.name]] == ids
        assert all(e["expected"] is not None for e in shipped[case.name])


@pytest.mark.slow
def test_local_run_shows_the_smallest_failing_input(tmp_path):
    """`make test` on a BroadcastTo gradient that is not summed back: the
    failing case shows the smaller input on which it fails, as the grader does."""
    root = tmp_path / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("data", "__pycache__"))
    shutil.copytree(REFERENCE / "python", root / "python", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    ops = root / "python/needle/ops/ops_mathematic.py"
    text = ops.read_text()
    right = "return reshape(summation(out_grad, axes=axes), shape) if axes else out_grad"
    assert text.count(right) == 1, "the reference's BroadcastTo.gradient changed: update this test"
    ops.write_text(text.replace(right, "return out_grad"))
    (root / "data").symlink_to(DATA)
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/hw1", "-q", "-k", "backward_broadcast_to_size1",
                          "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True, timeout=600)
    assert ("Smallest failing input: BroadcastTo.gradient (1,) -> (2,): inputs [-2.], out_grad [ 3., -4.]; "
            "expected [-1.], got [ 3., -4.]") in run.stdout, run.stdout
