"""Likely causes (grader/grading/explain/causes/), without the sandbox: the
catalogue applies to the reference, the proof table is well formed and
reaches the 80% bar, and the matching rule names exactly one cause or none.

The mutants' runs through the real grader are in test_verdicts.py (slow).
"""

import numpy as np
import pytest
from catalogue import causes, mutants

from grader import REFERENCE
from grader.grading.explain.causes import catalogue, diagnose, edits
from grader.grading.report import results as report
from grader.grading.run.outcomes import Outcome
from grader.shipped.cases import CASES

CASE = {c.name: c for c in CASES}
SOURCES = {edits.OPS: (REFERENCE / edits.OPS).read_text()}


# ---------------------------------------------------------------- the catalogue


@pytest.mark.parametrize("mutant", catalogue.MUTANTS, ids=lambda m: m.name)
def test_catalogue_edits_apply_and_parse(mutant):
    out = edits.apply_edits(SOURCES, mutant.edits)
    compile(out[edits.OPS], mutant.name, "exec")
    assert out != SOURCES
    assert "{" not in mutant.message and mutant.message.strip() == mutant.message


def test_catalogue_names_unique():
    names = [m.name for m in catalogue.MUTANTS]
    assert len(names) == len(set(names))


def test_a_stale_anchor_fails_naming_the_catalogue():
    with pytest.raises(edits.AnchorError, match="catalogue.py"):
        edits.Body(edits.OPS, "NoSuchOp.gradient", "return out_grad").apply(SOURCES[edits.OPS])


# ---------------------------------------------------------------- the proof table


def test_proof_table_names_real_entries_and_reaches_the_bar():
    known = {m.name for m in mutants.MUTANTS}
    entries = {m.name for m in catalogue.MUTANTS}
    for name, expected in causes.DIAGNOSED.items():
        assert name in known, name
        assert expected <= entries, (name, expected - entries)
    gradient = causes.GRADIENT_MUTANTS
    assert len(gradient) >= 15
    assert all(m.name in causes.DIAGNOSED for m in gradient), "every gradient mutant needs a row"
    named = [m for m in gradient if causes.DIAGNOSED[m.name]]
    assert len(named) / len(gradient) >= causes.MIN_RATE


# ---------------------------------------------------------------- the matching rule


def _grad(*arrays):
    return Outcome(
        True,
        value={
            "analytic": [np.asarray(a, dtype=np.float64) for a in arrays],
            "numeric": [np.asarray(a, dtype=np.float64) for a in arrays],
        },
    )


X = np.arange(1.0, 13.0).reshape(3, 4)
NEGATE = CASE["backward_negate"]


def test_one_matching_bug_names_its_cause():
    mutants_ = {"negate_identity": {NEGATE.name: _grad(X)}, "log_sign": {NEGATE.name: _grad(2 * X)}}
    got = diagnose.cause_of(NEGATE, _grad(X), _grad(-X), mutants_)
    assert got == next(m.message for m in catalogue.MUTANTS if m.name == "negate_identity")


def test_two_causes_matching_give_no_line():
    mutants_ = {"negate_identity": {NEGATE.name: _grad(X)}, "log_sign": {NEGATE.name: _grad(X)}}
    assert diagnose.cause_of(NEGATE, _grad(X), _grad(-X), mutants_) == ""


def test_no_match_and_an_untouched_case_give_no_line():
    assert diagnose.cause_of(NEGATE, _grad(3 * X), _grad(-X), {"negate_identity": {NEGATE.name: _grad(X)}}) == ""
    # a bug that leaves the case right explains nothing there, even a student within tolerance of it
    assert diagnose.cause_of(NEGATE, _grad(X + 1e-9), _grad(X), {"negate_identity": {NEGATE.name: _grad(X)}}) == ""


def test_shape_tells_when_no_value_matches():
    case = CASE["backward_broadcast_to_size1"]
    mutants_ = {"broadcast_identity": {case.name: _grad(np.ones((3, 4)))}}
    got = diagnose.cause_of(case, _grad(np.zeros((3, 4))), _grad(np.ones((3, 1))), mutants_)
    assert got == catalogue.NOT_SUMMED
    # a shape no flagged bug has: nothing
    assert diagnose.cause_of(case, _grad(np.zeros((4, 3))), _grad(np.ones((3, 1))), mutants_) == ""


def test_errors_match_by_text_without_the_place():
    case = CASE["backward_summation_one_axis"]
    text = "ValueError: could not broadcast input array from shape (3,2) into shape (3,4,2)"
    mutant = Outcome(False, problem=text + " (at ops_mathematic.py:260)", error_type="ValueError")
    student = Outcome(
        False, problem=text + " (at python/needle/ops/ops_mathematic.py:99 in f)", error_type="ValueError"
    )
    got = diagnose.cause_of(case, student, _grad(X), {"summation_no_reshape": {case.name: mutant}})
    assert got == catalogue.NO_RESHAPE


def test_advisory_stub_and_timeout_are_never_diagnosed():
    advisory = CASE["backward_summation_int_axis"]
    assert not diagnose.eligible(advisory, _grad(X))
    stub = Outcome(False, problem="NotImplementedError: Q2: Negate.gradient", error_type="NotImplementedError")
    assert not diagnose.eligible(NEGATE, stub)
    assert not diagnose.eligible(NEGATE, Outcome(False, problem="no value: the worker stopped"))
    assert diagnose.eligible(NEGATE, _grad(X))


def test_the_cause_shows_under_its_case_in_report_md():
    case = report.CaseResult(
        "backward_negate",
        "backward",
        "Q2.19",
        0.0,
        1.0,
        False,
        diagnose.with_cause("Negate.gradient: (3,4): wrong values", "Likely cause: negate it"),
        False,
    )
    md = report.markdown(report.Report("s", (case,), report.question_scores((case,), ()), "bwrap", 1.0))
    lines = report._case_lines(case)
    assert lines[0].endswith("wrong values") and lines[1] == "  - Likely cause: negate it"
    assert "Likely cause: negate it" in report.gradescope_json(report.Report("s", (case,), (), "bwrap", 1.0))
    assert md


def test_a_bug_the_student_passes_is_ruled_out():
    """DivScalar.compute multiplying gives the Q2 values of DivScalar.gradient
    multiplying; a student passing Q1's DivScalar case has only the second."""
    fwd, bwd = CASE["forward_divide_scalar"], CASE["backward_divide_scalar"]
    y = Outcome(True, value=np.ones((3, 4), dtype=np.float32))
    product = _grad(2.5 * X)
    values = {
        "divide_scalar_compute_product": {fwd.name: Outcome(True, value=6.25 * y.value), bwd.name: product},
        "divide_scalar_product": {fwd.name: y, bwd.name: product},
    }
    answers = {fwd.name: y, bwd.name: _grad(X / 2.5)}
    assert diagnose.cause_of(bwd, product, answers[bwd.name], values) == ""  # ambiguous
    ruled_out = diagnose.refuted([fwd, bwd], {fwd.name: y, bwd.name: product}, answers, values)
    assert ruled_out == {"divide_scalar_compute_product"}
    got = diagnose.cause_of(bwd, product, answers[bwd.name], values, ruled_out)
    assert got == next(m.message for m in catalogue.MUTANTS if m.name == "divide_scalar_product")
