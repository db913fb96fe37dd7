"""Smallest failing input, the grader's side without the sandbox: the
candidates (smaller, valid, the reference computes every one), the spec's
validation, the rule that picks the smallest, and the line's secrecy. The
reference needle runs in-process here (trusted); a planted bug is a
monkeypatched method of it."""

import json
import threading

import numpy as np
import pytest
import worker_script

from grader.core.assignment import Assignment
from grader.grading.explain.shrink import candidates as cands
from grader.grading.explain.shrink import line, reference, run, spec
from grader.grading.run.outcomes import Outcome
from grader.shipped import checks
from grader.shipped import smallest as smallest_rule
from grader.shipped.cases import BY_NAME, CASES, calls
from grader.shipped.compare import DRAWN, HIDDEN, PUBLIC

REGISTRY = Assignment.hw1().registry()
SHRINKABLE = [c for c in CASES if reference.shrinkable(c)]
GRADIENT_CASES = [c for c in CASES if c.question == "backward" and not c.advisory]


def _entries(case):
    return int(np.prod([int(np.prod(s)) for s, _, _ in case.call.inputs]))


def test_every_scored_gradient_case_shrinks():
    assert [c.name for c in GRADIENT_CASES if not reference.shrinkable(c)] == []


def test_advisories_and_numpy_scalar_cases_do_not_shrink():
    assert not any(c.advisory for c in SHRINKABLE)
    assert BY_NAME["forward_power_scalar_numpy_int"].call is None  # np.int64(2) would reach the worker as 2


@pytest.mark.parametrize("case", SHRINKABLE, ids=lambda c: c.name)
def test_candidates_are_smaller_valid_and_ordered(case):
    found = cands.candidates(case)
    assert 0 < len(found) <= cands.MAX_PER_CASE
    original = [s for s, _, _ in case.call.inputs]
    out = cands.out_shape(case.call.op, tuple(original), dict(case.call.kwargs))
    for c in found:
        assert len(c.shapes) == len(original) and c.dtypes == tuple(d for _, d, _ in case.call.inputs)
        for small, big in zip(c.shapes, original):
            assert np.prod(small) <= np.prod(big) and len(small) <= max(len(big), len(out))
        assert np.prod(c.out_shape) <= np.prod(out)
        assert cands.out_shape(c.op, c.shapes, dict(c.kwargs)) == c.out_shape
        assert (c.shapes, c.kwargs) != (tuple(original), case.call.kwargs)
        for array, positive in zip(c.arrays(), c.positive):
            assert np.all(array != 0) and (not positive or np.all(array > 0))
    assert [c.size for c in found] == sorted(c.size for c in found)
    assert len({c.id for c in found}) == len(found)


def test_broadcast_keeps_its_kind_of_axes():
    shapes = {(c.shapes[0], dict(c.kwargs)["shape"]) for c in cands.candidates(BY_NAME["backward_broadcast_to_middle"])}
    assert ((1,), (2, 2)) in shapes  # a stretched size-1 axis
    assert ((), (2,)) in shapes  # a new leading axis
    for src, dest in shapes:
        assert np.broadcast_shapes(src, dest) == dest


def test_summation_renumbers_its_axes():
    for c in cands.candidates(BY_NAME["backward_summation_tuple"]):
        axes = dict(c.kwargs)["axes"]
        assert axes and all(0 <= a < len(c.shapes[0]) for a in axes)


def test_values_differ_between_neighbours_and_inputs():
    a, b = cands.pattern((2, 2), "float64", False, 1), cands.pattern((2, 2), "float64", False, 2)
    assert len(set(a.ravel())) == 4 and not np.array_equal(a, b) and not np.any(np.abs(a) == 1)


def _evaluate(ndl, candidate, description="x"):
    entry = json.loads(spec.text(spec.document([candidate], {candidate.case: description}, ["needle"])))
    try:
        return Outcome(True, value=_plain(calls.evaluate(ndl, entry["candidates"][0])))
    except Exception as exc:  # noqa: BLE001
        return Outcome(False, problem=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__)


def _plain(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def test_reference_computes_every_candidate(ndl):
    """The reference has a value for each candidate, and a gradient one
    agrees with central differences of its forward (the values are right)."""
    for candidate in reference.all_candidates(REGISTRY):
        outcome = _evaluate(ndl, candidate)
        assert outcome.ok, (candidate, outcome.problem)
        if candidate.kind == "grad1":
            arrays, (out_grad,) = candidate.arrays(), candidate.out_grads()
            kwargs = dict(candidate.kwargs)

            def forward(*xs):
                return getattr(ndl, candidate.op)(*[ndl.Tensor(x.astype(np.float64)) for x in xs], **kwargs).numpy()

            from grader.shipped.cases.util import numeric_gradients

            numeric = numeric_gradients(forward, [a.astype(np.float64) for a in arrays], out_grad)
            for got, want in zip(outcome.value["analytic"], numeric):
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=str(candidate))


def test_smallest_is_found_for_a_planted_bug_and_fails(ndl, monkeypatch):
    case = BY_NAME["backward_broadcast_to_middle"]
    chosen = cands.candidates(case)
    expected = {c.id: _evaluate(ndl, c) for c in chosen}
    monkeypatch.setattr(ndl.ops.ops_mathematic.BroadcastTo, "gradient", lambda self, out_grad, node: out_grad)
    got = {c.id: _evaluate(ndl, c) for c in chosen}
    best = run.smallest(case, "value", chosen, expected, got)
    assert best is not None and best.size <= chosen[-1].size
    assert not checks.check(case, expected[best.id].value, got[best.id].value).passed
    # none smaller fails: the pick is the first failing one in size order
    for c in chosen[: chosen.index(best)]:
        assert checks.check(case, expected[c.id].value, got[c.id].value).passed


def test_a_failure_like_the_case_comes_first(ndl):
    """A case that failed with wrong values is explained by the smallest
    input with wrong values, even when smaller ones raise; only when no
    input fails like it does the smallest failure of another kind count."""
    case = BY_NAME["backward_log"]
    chosen = cands.candidates(case)
    expected = {c.id: _evaluate(ndl, c) for c in chosen}
    raising = Outcome(False, problem="ValueError: boom", error_type="ValueError")
    wrong = Outcome(True, value={"analytic": [np.full(chosen[4].shapes[0], 7.5)]})
    got = {**expected, **{c.id: raising for c in chosen[:3]}, chosen[4].id: wrong}
    assert run.smallest(case, "value", chosen, expected, got) == chosen[4]
    assert run.smallest(case, "ValueError", chosen, expected, got) == chosen[0]
    assert run.smallest(case, "TypeError", chosen, expected, got) == chosen[0]
    assert run.smallest(case, "value", chosen, expected, expected) is None


def test_correct_code_has_no_smallest(ndl):
    case = BY_NAME["backward_matmul_batched_by_2d"]
    chosen = cands.candidates(case)
    values = {c.id: _evaluate(ndl, c) for c in chosen}
    assert run.smallest(case, "value", chosen, values, values) is None


def test_failing_skips_stubs_and_passing_cases():
    case = BY_NAME["backward_log"]
    answer = Outcome(True, value={"analytic": [np.ones((3, 4))], "numeric": [np.ones((3, 4))]})
    stub = Outcome(False, problem="NotImplementedError: Q2: Log.gradient", error_type="NotImplementedError")
    assert run._failure(case, stub, answer) is None
    assert run._failure(case, answer, answer) is None
    assert run._failure(case, Outcome(True, value={"analytic": [np.zeros((3, 4))]}), answer) == "value"


# ---------------------------------------------------------------- the spec


def _doc():
    c = cands.candidates(BY_NAME["backward_divide"])[0]
    return spec.document([c], {c.case: "EWiseDiv.gradient"}, ["needle"])


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda d: d.update(version=2), "'version'"),
        (lambda d: d["candidates"][0].update(id="../x"), "'id'"),
        (lambda d: d["candidates"].append(dict(d["candidates"][0])), "'id'"),
        (lambda d: d["candidates"][0].update(kind="eval"), "'kind'"),
        (lambda d: d["candidates"][0].update(op="__import__('os')"), "'kind'"),
        (lambda d: d["candidates"][0]["inputs"][0].update(dtype="object"), "'inputs'[0]"),
        (lambda d: d["candidates"][0]["inputs"][0].update(data=[[0.0] * 5000]), "'inputs'[0]"),
        (lambda d: d["candidates"][0]["out_grads"][0].update(data=[float("nan")]), "'out_grads'[0]"),
        (lambda d: d["candidates"][0].update(kwargs={"axes": "0"}), "'kwargs'"),
    ],
)
def test_spec_validation_names_the_bad_field(change, field):
    doc = _doc()
    spec.validate(doc)
    change(doc)
    with pytest.raises(spec.SpecError, match=field.replace("[", r"\[").replace("]", r"\]")):
        spec.validate(doc)


def test_worker_reads_the_spec_the_grader_writes():
    """The worker is a script (nothing imports it): its mode and file names are the spec's."""
    consts = worker_script.constants()
    assert (consts["SHRINK"], consts["SPEC"]) == (spec.MODE, spec.FILE)


# ---------------------------------------------------------------- the line


def _line_for(case_name, secret, got):
    c = cands.candidates(BY_NAME[case_name])[0]
    expected = {"analytic": [np.array([5.0])]}
    return line.text(c, expected, got, secret)


def test_line_on_public_and_drawn_cases_shows_values():
    got = Outcome(True, value={"analytic": [np.array([[2.0, 3.0]])]})
    for secret in (PUBLIC, DRAWN):
        text = _line_for("backward_broadcast_to_leading", secret, got)
        assert text == (
            "Smallest failing input: BroadcastTo.gradient () -> (): inputs -2., out_grad 3.; "
            "expected [5.], got [[2., 3.]]"
        )


def test_line_on_a_hidden_case_shows_no_value():
    got = Outcome(False, problem="ValueError: secret 0.123 (at x.py:1)", error_type="ValueError")
    text = _line_for("backward_broadcast_to_middle", HIDDEN, got)
    assert text == "Smallest failing input: BroadcastTo.gradient () -> () (values are shown for public cases only)"
    assert "0.123" not in text and "5." not in text


def test_line_shows_an_error_without_its_place():
    got = Outcome(
        False, problem="ValueError: bad shape (at python/needle/ops/ops_mathematic.py:3)", error_type="ValueError"
    )
    assert _line_for("backward_broadcast_to_leading", PUBLIC, got).endswith("got raised ValueError: bad shape")


def test_values_are_capped():
    assert len(smallest_rule.value_text(np.arange(10_000.0))) <= smallest_rule.MAX_VALUE


def test_with_smallest_puts_the_cause_first():
    case = BY_NAME["backward_log"]
    explain = run.with_smallest(lambda c, o: "Likely cause: x", {case.name: "Smallest failing input: y"})
    assert explain(case, None) == "Likely cause: x\nSmallest failing input: y"
    assert run.with_smallest(None, {})(case, None) == ""


def test_time_limit_is_the_failing_questions_longest():
    from grader.grading.run.time_limits import TimeLimit
    from grader.grading.run.workers import QuestionRun

    runs = {
        "forward": QuestionRun("forward", {}, "", "", "bwrap", limit=TimeLimit(20, "limit: floor")),
        "backward": QuestionRun("backward", {}, "", "", "bwrap", limit=TimeLimit(31.5, "limit: 10 x")),
    }
    assert reference.time_limit(runs, {"forward", "backward"}).seconds == 31.5
    assert reference.time_limit(runs, {"forward"}).why.startswith("limit: floor")


def test_early_starts_once_when_the_shrinkable_questions_are_done(monkeypatch):
    """Early (run_all's on_done) computes the lines as soon as every question
    holding a shrinkable case has finished, once, with what has run so far;
    result() then returns them without a second run."""
    calls_made = []
    monkeypatch.setattr(
        run,
        "lines",
        lambda config, answers, runs, files, drawn=True: calls_made.append(sorted(runs)) or {"case": "line"},
    )
    config = type("Config", (), {"assignment": Assignment.hw1()})()
    early = run.Early(config, {}, {}, drawn=True)
    wanted = sorted({c.question for c in SHRINKABLE})
    longest, others = "nn_epoch_ndl", [q for q in REGISTRY.run_order if q != "nn_epoch_ndl"]
    assert longest not in wanted
    ready = next(others[: k + 1] for k in range(len(others)) if set(wanted) <= set(others[: k + 1]))
    for question in ready:
        early(question, object())
    early.wait()
    assert calls_made == [sorted(ready)]  # started with the last of them, before the longest finished
    for question in others[len(ready) :]:
        early(question, object())
    early(longest, object())
    assert early.result({}) == {"case": "line"} and len(calls_made) == 1


def test_early_runs_beside_the_reporting_so_later_questions_are_reported_meanwhile(monkeypatch):
    """The hook returns while the smallest inputs' run goes on: run_all
    reports the questions after it (the likely-cause step's run on the
    course's inputs starts on them) instead of waiting for it; result()
    waits for it, and gives what it raised."""
    going, release = threading.Event(), threading.Event()

    def slow(config, answers, runs, files, drawn=True):
        going.set()
        assert release.wait(30)
        raise ValueError("the run broke")

    monkeypatch.setattr(run, "lines", slow)
    config = type("Config", (), {"assignment": Assignment.hw1()})()
    early = run.Early(config, {}, {}, drawn=True)
    reporting = threading.Thread(target=lambda: [early(q, object()) for q in REGISTRY.run_order])
    reporting.start()
    reporting.join(10)
    assert not reporting.is_alive() and going.wait(10)  # every question reported while the run still goes on
    release.set()
    early.wait()  # over, its error kept for result()
    with pytest.raises(ValueError, match="the run broke"):
        early.result({})


def test_early_falls_back_when_a_question_never_ran(monkeypatch):
    monkeypatch.setattr(run, "lines", lambda config, answers, runs, files, drawn=True: {"n": str(len(runs))})
    config = type("Config", (), {"assignment": Assignment.hw1()})()
    early = run.Early(config, {}, {}, drawn=True)
    early("nn_epoch_ndl", object())
    assert early.result({"a": 1, "b": 2}) == {"n": "2"}  # computed at the end, on every run


def test_the_kind_test_without_candidates_covers_the_shrinkable_cases_and_their_questions_only():
    """shrink.Early waits for the questions of_shrinkable_kind names before
    it starts: every shrinkable case's question, and (for hw1) no other."""
    kind = [c for c in CASES if reference.of_shrinkable_kind(c)]
    assert {c.name for c in SHRINKABLE} <= {c.name for c in kind}
    assert {c.question for c in kind} == {c.question for c in SHRINKABLE} == {"forward", "backward"}
    assert not any(reference.of_shrinkable_kind(c) for c in CASES if c.advisory)
