"""The expected-value cache: keyed on what answers depend on, and it refuses
a reference that fails its own cases."""

import dataclasses
import json
import uuid

import numpy as np
import pytest

from grader.core.assignment import Assignment
from grader.grading.run import expected
from grader.grading.run.outcomes import Outcome
from grader.grading.run.workers import QuestionRun
from grader.shipped.cases import CASES

HW1 = Assignment.hw1().registry()


def _runs(value_for):
    """QuestionRuns where every computing case returns value_for(case)."""
    runs = {}
    for case in CASES:
        run = runs.setdefault(case.question, QuestionRun(case.question, {}, "", "", "bwrap"))
        if case.fn is not None:
            run.outcomes[case.name] = Outcome(True, value=value_for(case))
    return runs


def _gradient_record(delta):
    analytic = np.linspace(-1, 1, 6).reshape(2, 3)
    return {"analytic": [analytic + delta], "numeric": [analytic]}


def test_right_reference_passes():
    expected._check_reference(_runs(lambda c: _gradient_record(0.0) if c.check == "analytic" else 1.0), HW1)


def test_reference_gradient_off_from_central_differences_is_refused():
    with pytest.raises(
        expected.ReferenceError,
        match=r"reference gradient 0 of backward_\w+ differs from "
        r"central differences \(max abs error 0\.001",
    ):
        expected._check_reference(_runs(lambda c: _gradient_record(1e-3) if c.check == "analytic" else 1.0), HW1)


def test_reference_without_a_value_is_refused():
    runs = _runs(lambda c: _gradient_record(0.0) if c.check == "analytic" else 1.0)
    name = CASES[0].name
    runs[CASES[0].question].outcomes[name] = Outcome(False, problem="NotImplementedError: Q1: X")
    with pytest.raises(expected.ReferenceError, match=f"reference fails {name}"):
        expected._check_reference(runs, HW1)


def test_reference_that_cannot_import_is_refused():
    runs = _runs(lambda c: _gradient_record(0.0) if c.check == "analytic" else 1.0)
    run = runs["forward"]
    runs["forward"] = QuestionRun(
        run.question, run.outcomes, "", "", "bwrap", "importing the submission failed: SyntaxError"
    )
    with pytest.raises(expected.ReferenceError, match="SyntaxError"):
        expected._check_reference(runs, HW1)


def test_cache_key_follows_numpy_version(monkeypatch):
    key = expected.cache_key(Assignment.hw1())
    assert key == expected.cache_key(Assignment.hw1())
    monkeypatch.setattr(np, "__version__", "0.0.0")
    assert expected.cache_key(Assignment.hw1()) != key


def test_first_build_of_the_expected_answers_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path / "cache"))
    built = []
    monkeypatch.setattr(
        expected, "build", lambda config, dest: (built.append(dest), (dest / "meta.json").write_text("{}"))
    )
    from grader.grading.run.config import RunConfig

    folder = expected.expected_dir(RunConfig(seed=""))  # public: no inputs to draw first
    err = capsys.readouterr().err
    assert len(built) == 1 and (folder / "meta.json").exists()
    assert "building the expected answers" in err and "expected answers ready" in err
    expected.expected_dir(RunConfig(seed=""))  # cached: silent, not rebuilt
    assert len(built) == 1 and capsys.readouterr().err == ""


def test_the_key_changes_with_the_sandboxs_packages():
    """The workers' numpy computes the answers: another package list recomputes them."""
    hw1 = Assignment.hw1()
    other = dataclasses.replace(hw1, packages=("numpy==2.0.0",))
    assert expected.cache_key(hw1) != expected.cache_key(other)
    assert expected.cache_key(hw1) == expected.cache_key(dataclasses.replace(hw1))


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_submissions_own_answers_are_built_without_timing_the_machine(monkeypatch):
    """Time limits come from the course's answers (reference_times), so a
    submission's own build neither times this machine (it would hold the
    reference's run back) nor records times; the course's build does."""
    from grader.grading.run import time_limits
    from grader.grading.run.config import RunConfig

    config = expected.settled(RunConfig())
    course_meta = json.loads((expected.expected_dir(expected.course(config)) / "meta.json").read_text())
    assert course_meta["times"]["workload_seconds"] > 0
    timed = []
    monkeypatch.setattr(time_limits, "workload_seconds", lambda: timed.append(1) or 0.01)
    own = expected.for_submission(config, uuid.uuid4().hex * 2)  # files no one graded: built now
    assert own.inputs is not None and own.inputs.own
    folder = expected.expected_dir(own)
    assert not timed
    meta = json.loads((folder / "meta.json").read_text())
    assert "times" not in meta and meta["tier"]
    answers = expected.load(own)
    assert all(answers[c.name].ok for q in own.inputs.own for c in HW1.producers(q))
