"""Time limits that scale with the machine: a multiple of the reference's own
time for the question, recorded when its answers are built and scaled by how
much slower the machine is now; the report says what the limit was and why.

The sandboxed tests grade one question each (run_all's `questions`) and take
their limits from the same derivation as `grader grade`, never a fixed
number of seconds, so a busy machine lengthens them instead of failing them.
"""

import dataclasses
import json
import os
import re
import threading
from pathlib import Path

import pytest
from catalogue import build
from catalogue.build import AUTOGRAD, SIMPLE_ML, Append, Body

from grader.grading.explain.feedback import feedback
from grader.grading.run import expected, time_limits
from grader.grading.run.config import QuestionLimits, RunConfig
from grader.grading.run.outcomes import Outcome
from grader.grading.run.time_limits import ReferenceTimes, TimeLimit
from grader.grading.run.workers import QuestionRun, run_all
from grader.shipped.cases import CASES

# Recorded when the answers were built: the epoch took 7 s, the workload 20 ms.
BUILT = ReferenceTimes({"nn_epoch_ndl": 7.0, "topo_sort": 0.3}, workload_seconds=0.02)


def _alone(limit: TimeLimit) -> TimeLimit:
    """The question's own limit, without its cases' (tests/grading/test_hangs.py)."""
    return dataclasses.replace(limit, cases=None)


# ---------------------------------------------------------------- the derivation


def test_limit_is_a_multiple_of_the_reference_on_the_machine_as_it_was():
    limits = time_limits.scaled(BUILT, now=0.02)
    assert _alone(limits["nn_epoch_ndl"]) == TimeLimit(70.0, "limit: 10 x the reference's 7.0 s on this machine")
    assert limits["nn_epoch_ndl"].cpu_seconds == 70


def test_a_slower_machine_gets_longer_limits():
    """The workload takes 5x as long now (a busier machine, or a slower one): so does the limit."""
    limits = time_limits.scaled(BUILT, now=0.1)
    assert _alone(limits["nn_epoch_ndl"]) == TimeLimit(
        350.0,
        "limit: 10 x the reference's 35.0 s on this machine now: "
        "7.0 s when its answers were built, x 5.00 as the "
        "machine is slower now",
    )


def test_the_calibration_is_measured_when_not_given(monkeypatch, tmp_path):
    monkeypatch.setattr(time_limits, "_recent", None)  # not timed yet in this process
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path))  # nor kept by another grading
    monkeypatch.setattr(time_limits, "workload_seconds", lambda: 0.024)  # a machine 1.2x slower, injected
    assert time_limits.scaled(BUILT)["nn_epoch_ndl"].seconds == 84.0
    assert RunConfig().time_limits_now(BUILT)["nn_epoch_ndl"].seconds == 84.0


def test_a_faster_machine_keeps_the_limits_measured():
    """A build timed on a busy machine must not make a quiet one's limits too tight."""
    assert time_limits.scaled(BUILT, now=0.002)["nn_epoch_ndl"].seconds == 70.0


def test_short_questions_get_the_floor():
    limit = time_limits.scaled(BUILT, now=0.02)["topo_sort"]
    assert _alone(limit) == TimeLimit(
        time_limits.FLOOR_SECONDS,
        f"limit: the {time_limits.FLOOR_SECONDS} s floor, more than 10 x the reference's 0.3 s on this machine",
    )


def test_timeout_option_replaces_the_scaled_limits(monkeypatch):
    monkeypatch.setattr(time_limits, "workload_seconds", lambda: pytest.fail("--timeout needs no calibration"))
    times = RunConfig(limits=QuestionLimits(seconds=7.5)).time_limits_now(BUILT)
    assert {q: _alone(t) for q, t in times.items()} == {
        q: TimeLimit(7.5, "limit: 7.5 s, set by --timeout") for q in BUILT.question_seconds
    }
    assert times["topo_sort"].cpu_seconds == 8


def test_overrides_replace_one_question():
    mine = TimeLimit(3.0, "limit: a test's")
    times = RunConfig(overrides={"topo_sort": mine}).time_limits_now(BUILT)
    assert times["topo_sort"] == mine and times["nn_epoch_ndl"].seconds >= 70


def test_questions_run_together_share_the_longest_limit_and_keep_each_cases():
    """The likely-cause step's one worker for several questions: the
    longest of their limits (a hang costs no more than in a worker of its
    own), every case its own as in its question's worker, the longest
    restart allowance."""
    cases = ReferenceTimes(
        {"nn_epoch_ndl": 7.0, "topo_sort": 0.3},
        0.02,
        {"nn_epoch_ndl": {"epoch_a": 3.0, "epoch_b": 1.0}, "topo_sort": {"topo_a": 0.1}},
    )
    limits = time_limits.scaled(cases, now=0.02)
    joined = time_limits.together(limits)
    assert joined.seconds == max(limits["nn_epoch_ndl"].seconds, limits["topo_sort"].seconds) == 70.0
    assert "the longest of its questions' limits (nn_epoch_ndl, topo_sort)" in joined.why
    for q, limit in limits.items():
        for case, _ in limit.cases.seconds:
            assert joined.case_seconds(case) == limit.case_seconds(case), case
    assert joined.restart == limits["nn_epoch_ndl"].restart == 6.0  # twice the epoch worker's 3 s start
    assert time_limits.together({q: _alone(t) for q, t in limits.items()}).cases is None


def test_a_recent_timing_stands_for_now_and_an_old_one_is_taken_again(monkeypatch, tmp_path):
    """A batch's pool process grades every few seconds: it times the machine
    once per RECENT_SECONDS, not once per grading."""
    timings = iter([0.02, 0.05, 0.03])
    taken = []
    monkeypatch.setattr(time_limits, "_recent", None)
    monkeypatch.setattr(time_limits, "workload_seconds", lambda: taken.append(1) or next(timings))
    clock = iter([100.0, 110.0, 129.9, 130.5, 131.0, 90.0])

    def recent():
        return time_limits.recent_workload_seconds(tmp_path, clock=lambda: next(clock))

    assert recent() == 0.02  # timed
    assert recent() == 0.02  # 10 s later: reused
    assert recent() == 0.02  # 29.9 s later: reused
    assert recent() == 0.05  # 30.5 s: timed again
    assert recent() == 0.05
    assert recent() == 0.03  # the clock went back: timed again
    assert len(taken) == 3


def test_the_next_grading_process_reuses_a_recent_timing_kept_in_the_cache(monkeypatch, tmp_path):
    """`grader grade` after `grader grade`: the second process reads the
    first one's timing (kept in the private cache, dated when it was taken)."""
    taken = []
    monkeypatch.setattr(time_limits, "workload_seconds", lambda: taken.append(1) or 0.05)
    kept = tmp_path / time_limits.KEPT
    for when, content, expect_timed in [
        (1000.0 - 5, "0.03", False),  # 5 s old: used
        (1000.0 - 31, "0.03", True),  # 31 s old: timed again, and the new timing kept
        (1000.0 - 5, "nan", True),  # not a timing: timed again
        (1000.0 - 5, "garbage", True),
        (1000.0 + 5, "0.03", True),  # dated in the future: timed again
    ]:
        monkeypatch.setattr(time_limits, "_recent", None)  # a new process
        kept.write_text(content)
        os.utime(kept, (when, when))
        taken.clear()
        got = time_limits.recent_workload_seconds(tmp_path, clock=lambda: 1000.0)
        assert (got, bool(taken)) == ((0.05, True) if expect_timed else (0.03, False)), (when, content)
        if expect_timed:
            assert kept.read_text() == "0.05" and kept.stat().st_mtime == 1000.0
    assert not [p for p in tmp_path.iterdir() if p.name != time_limits.KEPT]  # no temporary file left


def test_gradings_in_one_process_share_a_timing(monkeypatch, tmp_path):
    """scaled() without `now` asks recent_workload_seconds: the second grading's limits cost no timing."""
    taken = []
    monkeypatch.setattr(time_limits, "_recent", None)
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path))
    monkeypatch.setattr(time_limits, "workload_seconds", lambda: taken.append(1) or 0.04)
    first, second = time_limits.scaled(BUILT), time_limits.scaled(BUILT)
    assert first == second and first["nn_epoch_ndl"].seconds == 140.0 and len(taken) == 1


def test_the_workload_takes_a_few_scheduler_slices():
    assert 0.001 < time_limits.workload_seconds() < 5


def test_feedback_of_a_case_cut_off_says_the_limit_and_its_derivation():
    case = next(c for c in CASES if c.question == "nn_epoch_ndl" and c.fn is not None)
    limit = time_limits.scaled(BUILT, now=0.024)["nn_epoch_ndl"]
    run = QuestionRun("nn_epoch_ndl", {}, f"timeout after 84 s; {limit.why}", "", "bwrap")
    text = feedback(case, Outcome(False, problem="no value: the worker stopped before this case reported"), run)
    assert text.endswith(
        "no value: the nn_epoch_ndl worker stopped (timeout after 84 s; limit: 10 x the "
        "reference's 8.4 s on this machine now: 7.0 s when its answers were built, x 1.20 as "
        "the machine is slower now)"
    )


# ---------------------------------------------------------------- what the build records


def test_building_the_answers_records_each_questions_time_and_each_cases(tmp_path, monkeypatch):
    calls = []
    registry = RunConfig().assignment.registry()

    def fake_run_all(files, config, times, base=None, questions=None, keep_outputs=None):
        calls.append(times)
        for q in questions:  # the worker's records, each with the seconds its case took
            (keep_outputs / q).mkdir()
            for k, c in enumerate(registry.producers(q)):
                record = {"status": "ok", "value": 1.0, "seconds": 0.01 * k}
                (keep_outputs / q / f"{c.name}.json").write_text(json.dumps(record))
        return {
            q: QuestionRun(
                q,
                {c.name: Outcome(True, value=_value(c)) for c in CASES if c.question == q and c.fn is not None},
                "",
                "",
                "bwrap",
                seconds=1.5,
            )
            for q in (questions or config.assignment.registry().question)
        }

    monkeypatch.setattr(expected, "run_all", fake_run_all)
    monkeypatch.setattr(time_limits, "workload_seconds", iter([0.03, 0.02]).__next__)  # before, after
    expected.build(RunConfig(seed=""), tmp_path)  # public inputs: no draws to make first
    times = ReferenceTimes.from_json(json.loads((tmp_path / "meta.json").read_text())["times"])
    cases = {q: {c.name: 0.01 * k for k, c in enumerate(registry.producers(q))} for q in registry.question}
    assert times == ReferenceTimes({q: 1.5 for q in registry.question}, 0.02, cases)
    # the reference itself runs under the build's guard, not under limits derived from itself
    assert set(calls[0].values()) == {time_limits.building()}


def _value(case):
    if case.check == "analytic":
        return {"analytic": [[1.0, 2.0]], "numeric": [[1.0, 2.0]]}
    return 1.0


# ---------------------------------------------------------------- in the sandbox


def _files(dest: Path, *edits) -> dict:
    """The reference's student files with `edits` (catalogue.build), as run_all takes them."""
    sources = build.apply_edits(build.reference_sources(), tuple(edits))
    build.write_submission(dest, sources)
    return {rel: dest / rel for rel in sources}


def _run_one(question, files, config):
    config = expected.settled(config)
    times = config.time_limits_now(expected.reference_times(config))
    return run_all(files, config, times, questions=[question])[question], times[question]


# A correct student whose epoch costs three of the reference's: twice the
# epoch on copies of the weights, thrown away, then the real one.
SLOW_EPOCH = Append(
    SIMPLE_ML,
    """
_reference_epoch = nn_epoch


def nn_epoch(X, y, W1, W2, lr=0.1, batch=100):
    for _ in range(2):
        _reference_epoch(X, y, ndl.Tensor(W1.numpy()), ndl.Tensor(W2.numpy()), lr=lr, batch=batch)
    return _reference_epoch(X, y, W1, W2, lr=lr, batch=batch)
""",
)


@pytest.mark.sandbox
def test_a_slow_but_correct_epoch_passes(tmp_path):
    # floor 1 s: only the reference's time decides Q6's limit, as for a full-size epoch
    config = RunConfig(limits=QuestionLimits(floor=1))
    run, limit = _run_one("nn_epoch_ndl", _files(tmp_path / "slow", SLOW_EPOCH), config)
    assert run.problem == "" and not run.import_error, (run.problem, run.log[-2000:])
    assert all(o.ok for o in run.outcomes.values()), {n: o.problem for n, o in run.outcomes.items() if not o.ok}
    assert limit.why.startswith("limit: 10 x the reference's")


@pytest.mark.sandbox
def test_an_infinite_loop_times_out_with_the_limit_named(tmp_path):
    # 3 x the reference's time for topo_sort (seconds), so that the test is short; floor 0.1 s: unused
    config = RunConfig(limits=QuestionLimits(multiple=3, floor=0.1))
    files = _files(tmp_path / "loop", Body(AUTOGRAD, "find_topo_sort", "while True:\n    pass"))
    run, limit = _run_one("topo_sort", files, config)
    assert limit.why.startswith("limit: 3 x the reference's")
    assert re.fullmatch(
        rf"(timeout after {limit.seconds:g} s|CPU time limit \({limit.cpu_seconds} s, SIGXCPU\))"
        rf"; {re.escape(limit.why)}",
        run.problem,
    ), run.problem
    case = next(c for c in CASES if c.question == "topo_sort" and c.fn is not None)
    assert f"worker stopped ({run.problem})" in feedback(case, run.outcomes[case.name], run)


def test_limits_measured_in_the_background_are_the_computed_ones():
    """Measuring runs the computation once, in its own thread, and gives its limits (or raises its error)."""
    started = threading.Event()
    calls = []

    def compute():
        calls.append(threading.current_thread().name)
        started.wait(10)
        return {"forward": time_limits.given(5)}

    measuring = time_limits.Measuring(compute)
    started.set()
    assert measuring["forward"] == time_limits.given(5) and dict(measuring) == {"forward": time_limits.given(5)}
    assert calls == ["time-limits"]

    def broken():
        raise RuntimeError("no workload")

    with pytest.raises(RuntimeError, match="no workload"):
        time_limits.Measuring(broken)["forward"]
