"""A case that hangs or kills its worker costs that case (and the cases that
really need its op), not its whole question: the cases that reported keep
their values, the case the worker was stopped in gets its own problem, and
the rest run again under the same limit (at most hangs.MAX_RERUNS times)."""

import numpy as np
import pytest
from catalogue import build

from grader.grading.explain.feedback import feedback
from grader.grading.run import expected, hangs
from grader.grading.run.config import QuestionLimits, RunConfig
from grader.grading.run.outcomes import Outcome
from grader.grading.run.time_limits import TimeLimit
from grader.grading.run.workers import QuestionRun
from grader.shipped.cases import BY_NAME

LIMIT = TimeLimit(8.0, "limit: 8 s, set by --timeout")
STOP = "timeout after 8 s; limit: 8 s, set by --timeout"
NO_VALUE = Outcome(False, problem="no value: the worker stopped before this case reported")


def _run(values, problem="", seconds=1.0):
    """A QuestionRun whose outcomes are `values` (name -> value, None: never reported)."""
    outcomes = {n: NO_VALUE if v is None else Outcome(True, value=v) for n, v in values.items()}
    return QuestionRun("forward", outcomes, problem, "", "none", seconds=seconds, limit=LIMIT)


class Worker:
    """A fake worker: each name in `hangs_on` stops it there; records what each re-run was asked."""

    def __init__(self, hangs_on):
        self.hangs_on, self.asked = set(hangs_on), []

    def __call__(self, names):
        self.asked.append(list(names))
        values, stopped = {}, ""
        for name in names:
            if stopped or name in self.hangs_on:
                stopped, values[name] = STOP, None
            else:
                values[name] = 1.0
        return _run(values, stopped)


NAMES = ["forward_divide", "forward_negate", "forward_divide_scalar", "forward_negate_0d", "forward_log", "forward_exp"]


def test_the_hung_case_alone_is_lost_and_the_rest_run_again():
    first = _run({"forward_divide": 1.0, **{n: None for n in NAMES[1:]}}, STOP, seconds=8.0)
    worker = Worker({"forward_negate"})
    got = hangs.isolate(first, NAMES, worker, BY_NAME)
    assert got.hung == ("forward_negate",)
    assert got.outcomes["forward_negate"].problem.startswith("did not finish in time (8 s): ")
    assert all(got.outcomes[n].ok for n in NAMES if n != "forward_negate")
    assert got.problem == "" and got.seconds == 9.0
    # negate_0d calls the hung case's op: it runs last
    assert worker.asked == [["forward_divide_scalar", "forward_log", "forward_exp", "forward_negate_0d"]]


def test_cases_of_the_same_op_may_hang_too_each_costing_itself():
    first = _run({"forward_divide": 1.0, **{n: None for n in NAMES[1:]}}, STOP)
    got = hangs.isolate(first, NAMES, Worker({"forward_negate", "forward_negate_0d"}), BY_NAME)
    assert got.hung == ("forward_negate", "forward_negate_0d")
    assert [n for n in NAMES if got.outcomes[n].ok] == [
        "forward_divide",
        "forward_divide_scalar",
        "forward_log",
        "forward_exp",
    ]


def test_the_re_runs_are_bounded():
    first = _run({n: None for n in NAMES}, STOP)
    worker = Worker(set(NAMES))  # every case hangs
    got = hangs.isolate(first, NAMES, worker, BY_NAME)
    assert len(worker.asked) == hangs.MAX_RERUNS and len(got.hung) == hangs.MAX_RERUNS + 1
    lost = [n for n in NAMES if n not in got.hung]
    assert lost and all(got.outcomes[n].problem.startswith("no value") for n in lost)
    assert got.problem == STOP  # their feedback says the worker stopped


def test_a_clean_run_or_an_import_failure_is_left_alone():
    clean = _run({n: 1.0 for n in NAMES})
    assert hangs.isolate(clean, NAMES, Worker(()), BY_NAME) is clean
    broken = QuestionRun("forward", {n: NO_VALUE for n in NAMES}, "exit 1", "", "none", import_error="importing...")
    worker = Worker(())
    assert hangs.isolate(broken, NAMES, worker, BY_NAME) is broken and worker.asked == []


def test_a_crash_names_the_case_without_the_students_signal_for_hidden_cases():
    first = _run({"forward_divide": 1.0, **{n: None for n in NAMES[1:]}}, "crashed: killed by signal 11 (SIGSEGV)")
    got = hangs.isolate(first, NAMES, Worker(()), BY_NAME)
    problem = got.outcomes["forward_negate"].problem
    assert problem.startswith("the worker stopped while running this case: crashed")
    hidden = BY_NAME["forward_negate_0d"]
    assert feedback(hidden, got.outcomes["forward_negate"], got).endswith(
        ": the worker stopped while running this case"
    )


def test_the_checker_fails_when_the_whole_question_is_lost():
    """Without isolate, every case after the hang has no value: what the checks above catch."""
    first = _run({"forward_divide": 1.0, **{n: None for n in NAMES[1:]}}, STOP)
    assert not first.outcomes["forward_divide_scalar"].ok
    got = hangs.isolate(first, NAMES, Worker({"forward_negate"}), BY_NAME, max_reruns=0)
    assert got.hung == ("forward_negate",) and not got.outcomes["forward_divide_scalar"].ok


# ---------------------------------------------------------------- in the sandbox

NEVER_RETURNS = build.Replace(
    build.OPS, "        return array_api.negative(a)\n", "        while True:\n            pass\n"
)


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_negate_that_never_returns_costs_only_what_calls_negate(tmp_path):
    sources = build.apply_edits(build.reference_sources(), (NEVER_RETURNS,))
    root = build.write_submission(tmp_path / "s", sources)
    files = {rel: root / rel for rel in sources}
    config = expected.settled(RunConfig(limits=QuestionLimits(seconds=8), seed=""))
    answers = expected.load(config)
    runs = expected.run_graded(files, config, questions=["forward", "backward"])
    q1, q2 = runs["forward"], runs["backward"]
    assert q1.hung[0] == "forward_negate", q1.hung
    assert q1.outcomes["forward_negate"].problem.startswith("did not finish in time (8 s)")
    # Q1: every case of another op keeps or gets its value (only the Negate cases are lost)
    lost = {n for n, o in q1.outcomes.items() if not o.ok}
    assert lost == {n for n in q1.outcomes if BY_NAME[n].call is not None and BY_NAME[n].call.op == "negate"}
    # Q2: many gradients subtract (a - b calls negate) and hang too; each re-run passes one of them, so
    # within the bounded re-runs at least half the question's cases get their values (before: none)
    assert len(q2.hung) == 1 + hangs.MAX_RERUNS and q2.hung[0] == "backward_divide", q2.hung
    assert sum(o.ok for o in q2.outcomes.values()) >= len(q2.outcomes) // 2
    for name in ("backward_divide_scalar", "forward_divide_scalar", "forward_exp"):
        run = runs[BY_NAME[name].question]
        assert run.outcomes[name].ok, run.outcomes[name].problem
        want, value = answers[name].value, run.outcomes[name].value
        want, value = [v["analytic"] if isinstance(v, dict) else v for v in (want, value)]
        np.testing.assert_allclose(np.asarray(value, dtype=float), np.asarray(want, dtype=float), rtol=1e-5)
    notes = hangs.notes(runs, config.assignment.registry())
    assert any(n.startswith("Q1 forward_negate: did not finish in time (8 s)") for n in notes), notes
