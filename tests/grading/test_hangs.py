"""A case that hangs or kills its worker costs that case (and the cases that
truly need its op), not its question: each case has its own time limit
within its question's, watched by the parent from the markers the worker
leaves while a case runs; a stopped worker's case alone is lost, the rest
run again in a new worker, within the question's limit plus a bounded
number of restarts (grader/grading/run/hangs.py)."""

import math
import time

import numpy as np
import pytest
from catalogue import build

from grader.grading.explain.feedback import feedback
from grader.grading.run import expected, hangs, time_limits
from grader.grading.run.config import QuestionLimits, RunConfig
from grader.grading.run.outcomes import Outcome
from grader.grading.run.time_limits import TimeLimit
from grader.grading.run.workers import QuestionRun
from grader.shipped.cases import BY_NAME

NO_VALUE = Outcome(False, problem="no value: the worker stopped before this case reported")
NAMES = ["forward_divide", "forward_negate", "forward_divide_scalar", "forward_negate_0d", "forward_log", "forward_exp"]
START = 0.5  # a fake worker's start, in seconds
CASE = 0.01  # a fake case's time


def _limit(seconds=20.0, case=3.0, restart=2.0):
    """A question's limit with every case of NAMES at `case` seconds of its own."""
    cases = time_limits.CaseLimits(tuple((n, case) for n in NAMES), restart, "a test's")
    return TimeLimit(seconds, f"limit: {seconds:g} s, a test's", cases)


class Worker:
    """A fake worker run: each case takes CASE seconds, or `slow[case]`
    (inf: it never returns), and the watch or the sandbox stops it as the
    real ones would; a case in `crashes_on` kills it at once. `marks`: the
    worker leaves its start markers. Records what each run was asked and its limit."""

    def __init__(self, hangs_on=(), crashes_on=(), marks=True, slow=None):
        self.slow = {**{n: float("inf") for n in hangs_on}, **(slow or {})}
        self.crashes_on, self.marks, self.asked, self.limits = set(crashes_on), marks, [], []

    def __call__(self, chosen, limit, watch):
        names = list(NAMES if chosen is None else chosen)
        self.asked.append(chosen)
        self.limits.append(limit)
        outcomes, problem, started, clock = {}, "", (), START
        for name in names:
            takes, own = self.slow.get(name, CASE), limit.case_seconds(name)
            if problem:
                outcomes[name] = NO_VALUE
                continue
            outcomes[name] = NO_VALUE
            started = (name,) if self.marks else ()
            if name in self.crashes_on:
                problem = "crashed: segmentation fault (SIGSEGV)"
            elif self.marks and takes > own and clock + own < limit.seconds:  # the watch sees it first
                watch.stopped_in, clock = name, clock + own
                problem = f"{hangs.CASE_STOP}: {name} ran past its own {own:g} s"
            elif clock + takes > limit.seconds:  # the sandbox's wall clock
                clock, problem = limit.seconds, f"timeout after {limit.seconds:g} s; {limit.why}"
            else:
                clock, started, outcomes[name] = clock + takes, (), Outcome(True, value=1.0)
        return QuestionRun("forward", outcomes, problem, "", "none", seconds=clock, limit=limit, started=started)


# ---------------------------------------------------------------- blame


def test_the_blame_goes_to_the_case_stopped_then_the_marked_one_then_the_first_without_a_value():
    outcomes = {"forward_divide": Outcome(True, value=1.0), **{n: NO_VALUE for n in NAMES[1:]}}
    run = QuestionRun("forward", outcomes, "timeout", "", "none", started=("forward_negate_0d",))
    assert hangs.blamed(run, NAMES, "forward_log") == "forward_log"  # the parent's own watch
    assert hangs.blamed(run, NAMES) == "forward_negate_0d"  # the worker's marker
    unmarked = QuestionRun("forward", outcomes, "timeout", "", "none")
    assert hangs.blamed(unmarked, NAMES) == "forward_negate"  # no marker: the first without a value
    # a marker on a case that reported, or not among the run's cases, blames nothing
    marked_done = QuestionRun("forward", outcomes, "timeout", "", "none", started=("forward_divide", "other"))
    assert hangs.blamed(marked_done, NAMES) == "forward_negate"
    assert hangs.blamed(run, NAMES, "not_a_case") == "forward_negate_0d"
    # a stop before any case started or reported (a hang at import): no case to blame
    nothing = QuestionRun("forward", {n: NO_VALUE for n in NAMES}, "timeout", "", "none")
    assert hangs.blamed(nothing, NAMES) == ""


def test_the_watch_stops_a_case_past_its_own_limit_on_the_parents_clock():
    now = [100.0]
    watch = hangs.CaseWatch(_limit(case=3.0), now=lambda: now[0])
    assert watch({"forward_divide.json", "forward_negate.started"}) == ""  # first seen now
    now[0] = 102.9
    assert watch({"forward_divide.json", "forward_negate.started"}) == "" and not watch.stopped_in
    now[0] = 103.1
    # a case that reported is done, whatever its marker says
    assert watch({"forward_negate.json", "forward_negate.started", "forward_log.started"}) == ""
    now[0] = 106.2
    reason = watch({"forward_negate.json", "forward_log.started"})
    assert reason.startswith(hangs.CASE_STOP) and watch.stopped_in == "forward_log"
    # a name of no case of the question has the question's limit (the sandbox's, which comes first)
    stray = hangs.CaseWatch(_limit(seconds=20.0, case=3.0), now=lambda: now[0])
    stray({"made_up.started"})
    now[0] += 19.0
    assert stray({"made_up.started"}) == ""


def test_a_cases_limit_is_its_share_of_its_questions_at_least_the_floor():
    cases = {"big": 0.91, "small": 0.11, "tiny": 0.005}  # each counted beyond 10 ms (noise)
    limit = time_limits.with_cases(TimeLimit(20.0, "limit: a test's"), cases, start=0.4, case_floor=3.0)
    assert limit.case_seconds("big") == 18.0 and limit.case_seconds("small") == 3.0
    assert limit.case_seconds("tiny") == 3.0 and limit.case_seconds("unknown") == 20.0
    assert limit.restart == time_limits.RESTART_FLOOR_SECONDS  # 2 x 0.4 s is below the floor
    assert time_limits.with_cases(TimeLimit(20.0, "x"), cases, start=3.0).restart == 6.0
    # milliseconds are noise: no share above the floor, however they compare
    noise = time_limits.with_cases(TimeLimit(20.0, "x"), {"a": 0.009, "b": 0.001}, start=0.4)
    assert noise.case_seconds("a") == noise.case_seconds("b") == time_limits.CASE_FLOOR_SECONDS
    # never more than the question's own limit, nor a floor above it
    short = time_limits.with_cases(TimeLimit(2.0, "limit: 2 s"), cases, start=0.4, case_floor=3.0)
    assert short.case_seconds("small") == 2.0 and short.case_seconds("big") == 2.0
    # the reference's times per case, recorded when its answers are built, become each case's limit
    built = time_limits.ReferenceTimes({"forward": 0.5}, 0.02, {"forward": {"forward_divide": 0.25}})
    assert time_limits.ReferenceTimes.from_json(built.to_json()) == built
    scaled = time_limits.scaled(built, now=0.02)["forward"]
    assert scaled.seconds == time_limits.FLOOR_SECONDS and scaled.case_seconds("forward_divide") == 20.0


def test_the_rest_runs_other_ops_first_and_shorter_limits_first():
    own = (("forward_exp", 15.0), ("forward_log", 3.0), ("forward_divide_scalar", 3.0), ("forward_negate_0d", 3.0))
    limit = TimeLimit(20.0, "limit: a test's", time_limits.CaseLimits(own, 2.0, "a test's"))
    rest = ["forward_exp", "forward_negate_0d", "forward_log", "forward_divide_scalar"]
    order = hangs.rerun_order(rest, ["forward_negate"], BY_NAME, limit)
    assert order == ["forward_log", "forward_divide_scalar", "forward_exp", "forward_negate_0d"]


# ---------------------------------------------------------------- isolate


def test_a_hung_op_costs_its_cases_alone_each_its_own_limit():
    worker = Worker(hangs_on={"forward_negate", "forward_negate_0d"})
    limit = _limit()
    got = hangs.isolate(NAMES, limit, worker, BY_NAME)
    assert got.hung == ("forward_negate", "forward_negate_0d")
    ok = ["forward_divide", "forward_divide_scalar", "forward_log", "forward_exp"]
    assert [n for n in NAMES if got.outcomes[n].ok] == ok and got.problem == ""
    # the rest after a hang: other ops first, negate_0d (the hung case's op) last; then the cases its own
    # limit stopped, with the rest of the question's time and no limit of their own
    assert worker.asked == [
        None,
        ["forward_divide_scalar", "forward_log", "forward_exp", "forward_negate_0d"],
        ["forward_negate", "forward_negate_0d"],
    ]
    # each restart gets what is left of the question's 20 s, plus the restart allowance
    first, second = START + CASE + 3.0, START + 3 * CASE + 3.0
    assert worker.limits[1].seconds == math.floor((20.0 - first + 2.0) * 10) / 10  # rounded down: within the bound
    assert worker.limits[1].case_seconds("forward_negate_0d") == 3.0
    assert worker.limits[2].seconds == math.floor((20.0 - first - (second - 2.0) + 2.0) * 10) / 10
    assert worker.limits[2].cases is None
    stop = got.outcomes["forward_negate"].problem
    assert stop.startswith(f"did not finish in time ({worker.limits[2].seconds:g} s): ")
    assert got.outcomes["forward_negate_0d"].problem.startswith("did not finish in time (3 s, this case's own limit): ")
    # the whole question's time, and no more than an allowance per restart beyond it
    assert got.seconds == pytest.approx(first + second + worker.limits[2].seconds)
    assert got.seconds <= limit.seconds + 2 * limit.restart


def test_a_slow_case_stopped_by_its_own_limit_gets_the_rest_of_the_time():
    worker = Worker(slow={"forward_log": 5.0})  # honest, but slower than its own 3 s
    got = hangs.isolate(NAMES, _limit(), worker, BY_NAME)
    assert all(o.ok for o in got.outcomes.values()) and got.hung == () and got.problem == ""
    assert worker.asked == [None, ["forward_exp"], ["forward_log"]]
    # too slow for all the question's time: lost, as the question's limit alone would lose it
    worker = Worker(slow={"forward_log": 30.0})
    got = hangs.isolate(NAMES, _limit(), worker, BY_NAME)
    assert got.hung == ("forward_log",) and [n for n in NAMES if not got.outcomes[n].ok] == ["forward_log"]


def test_the_restarts_stop_when_the_questions_limit_is_spent():
    limit = _limit(seconds=10.0, case=3.0, restart=2.0)
    worker = Worker(hangs_on=set(NAMES))  # every case hangs
    got = hangs.isolate(NAMES, limit, worker, BY_NAME)
    # 3.5 s charged to the first run, 1.5 s to each restart (3.5 s beyond the 2 s allowance): after the
    # fourth restart 0.5 s are left, less than MIN_LEFT_SECONDS (negate_0d, of the op of a case that
    # hung, waits till last)
    assert len(worker.asked) == 5
    assert got.hung == ("forward_divide", "forward_negate", "forward_divide_scalar", "forward_log", "forward_exp")
    assert got.outcomes["forward_negate_0d"].problem.startswith("no value")
    assert got.problem.startswith("timeout after 18 s in all its workers") and "5 of its cases" in got.problem
    # the bound: the question's limit plus one allowance per restart
    assert got.seconds <= limit.seconds + (len(worker.asked) - 1) * limit.restart


def test_the_restarts_are_bounded_even_when_each_stop_is_free():
    names = [c.name for c in BY_NAME.values() if c.question == "forward" and c.fn is not None]
    limit = TimeLimit(20.0, "limit: 20 s", time_limits.CaseLimits((), 2.0, "a test's"))
    worker = Worker(crashes_on=set(names))  # every case crashes at once: no time charged

    def run(chosen, limit, watch):
        return worker(names if chosen is None else chosen, limit, watch)

    got = hangs.isolate(names, limit, run, BY_NAME)
    assert len(worker.asked) == 1 + hangs.MAX_RESTARTS and len(got.hung) == 1 + hangs.MAX_RESTARTS
    assert got.problem.startswith(f"{hangs.MAX_RESTARTS} restarts")
    # the count alone would leave the student guessing: the cause is said too
    assert got.problem.endswith("the last one by: crashed: segmentation fault (SIGSEGV)")


def test_a_stop_before_any_case_started_costs_the_question_without_a_restart():
    worker = Worker(hangs_on={"forward_divide"}, marks=False)  # as a hang at import looks: nothing reported
    got = hangs.isolate(NAMES, _limit(), worker, BY_NAME)
    assert worker.asked == [None] and got.hung == () and got.problem.startswith("timeout after 20 s")
    assert all(not o.ok for o in got.outcomes.values())


def test_a_clean_run_or_an_import_failure_is_left_alone():
    clean = Worker()
    assert hangs.isolate(NAMES, _limit(), clean, BY_NAME).problem == "" and clean.asked == [None]
    broken = QuestionRun("forward", {n: NO_VALUE for n in NAMES}, "exit 1", "", "none", import_error="importing...")
    asked = []
    got = hangs.isolate(NAMES, _limit(), lambda *a: asked.append(a) or broken, BY_NAME)
    assert got is broken and len(asked) == 1


def test_a_crash_names_the_case_without_the_students_signal_for_hidden_cases():
    got = hangs.isolate(NAMES, _limit(), Worker(crashes_on={"forward_negate"}), BY_NAME)
    problem = got.outcomes["forward_negate"].problem
    assert problem.startswith("the worker stopped while running this case: crashed")
    hidden = BY_NAME["forward_negate_0d"]
    assert feedback(hidden, got.outcomes["forward_negate"], got).endswith(
        ": the worker stopped while running this case"
    )
    note = hangs.notes({"forward": got}, RunConfig().assignment.registry())
    assert note == [
        "Q1 forward_negate: the worker stopped while running this case; its question's other cases ran without it"
    ]


# ---------------------------------------------------------------- in the sandbox

# Asleep, not spinning: the watch stops a case by the wall clock either way, and the test's
# hangs then leave the CPU to the tests running beside it (spinning, they took 40 CPU seconds).
NEVER_RETURNS = build.Replace(
    build.OPS,
    "        return array_api.negative(a)\n",
    "        import time\n        while True:\n            time.sleep(1)\n",
)
RAISES = build.Replace(build.OPS, "        return array_api.negative(a)\n", "        raise RuntimeError('negate')\n")
QUESTIONS = ["forward", "backward"]


def _files(dest, edit):
    sources = build.apply_edits(build.reference_sources(), (edit,))
    root = build.write_submission(dest, sources)
    return {rel: root / rel for rel in sources}


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_negate_that_never_returns_costs_only_the_cases_that_call_negate(tmp_path):
    # A question limit well above what the hangs take by their own limits (1.5 s each, not the
    # default 3 s: the test waits for every one of them, and then for the rest of the limit), so
    # that a busy machine never spends it before every other case has run.
    config = expected.settled(RunConfig(limits=QuestionLimits(seconds=20, case_floor=1.5), seed=""))
    answers = expected.load(config)
    # The cases that truly call negate: those that fail when it raises.
    raised = expected.run_graded(_files(tmp_path / "raises", RAISES), config, questions=QUESTIONS)
    calls = {q: {n for n, o in raised[q].outcomes.items() if not o.ok} for q in QUESTIONS}
    assert calls["forward"] == {"forward_negate", "forward_negate_0d"} and len(calls["backward"]) >= 3, calls
    limits = config.time_limits_now(expected.reference_times(config))
    start = time.monotonic()
    runs = expected.run_graded(_files(tmp_path / "hangs", NEVER_RETURNS), config, questions=QUESTIONS)
    took = time.monotonic() - start
    for q in QUESTIONS:
        run, limit = runs[q], limits[q]
        lost = {n for n, o in run.outcomes.items() if not o.ok}
        assert lost == calls[q], (q, sorted(lost ^ calls[q]), run.problem)
        assert set(run.hung) == calls[q] and not run.problem, (q, run.hung, run.problem)
        problems = [run.outcomes[name].problem for name in run.hung]
        assert all(p.startswith("did not finish in time (") for p in problems), problems
        # each stopped at its own limit, a few seconds, but the one that then got the rest of the time
        own = [
            n
            for n in run.hung
            if run.outcomes[n].problem.startswith(
                f"did not finish in time ({limit.case_seconds(n):g} s, this case's own limit)"
            )
        ]
        assert len(own) >= len(run.hung) - 1 and all(limit.case_seconds(n) < limit.seconds / 4 for n in own), problems
        # bounded: the question's limit plus an allowance per restart (at most two per hung case), and
        # half a second per run for its teardown
        assert run.seconds <= limit.seconds + 2 * len(run.hung) * (limit.restart + 0.5), (q, run.seconds)
    assert took <= sum(limits[q].seconds + 2 * len(runs[q].hung) * (limits[q].restart + 2.0) for q in QUESTIONS) + 30
    for name in ("backward_divide_scalar", "backward_matmul_2d", "forward_divide_scalar", "forward_exp"):
        run = runs[BY_NAME[name].question]
        assert run.outcomes[name].ok, run.outcomes[name].problem
        want, value = answers[name].value, run.outcomes[name].value
        want, value = [v["analytic"] if isinstance(v, dict) else v for v in (want, value)]
        want, value = [v if isinstance(v, list) else [v] for v in (want, value)]
        assert len(value) == len(want), name
        for got, ref in zip(value, want):
            np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(ref, dtype=float), rtol=1e-5)
    notes = hangs.notes(runs, config.assignment.registry())
    for q in QUESTIONS:
        for name in calls[q]:
            label = config.assignment.registry().question[q].label
            assert any(n.startswith(f"{label} {name}: did not finish in time (") for n in notes), (name, notes)
