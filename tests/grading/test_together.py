"""A submission's questions grouped into --jobs workers (issue 37), each
question run again alone when its group's run went wrong, so that it gets
the verdicts a process of its own gives it. The sandbox is faked: what is
tested is which runs happen and which outcomes count."""

import pytest

from grader import sandbox
from grader.grading.run import together
from grader.grading.run.config import RunConfig
from grader.grading.run.outcomes import Outcome
from grader.grading.run.time_limits import TimeLimit
from grader.grading.run.workers import SEVERAL, QuestionRun

REF = {
    "forward": 1.2,
    "backward": 1.3,
    "topo_sort": 1.0,
    "compute_gradient": 1.05,
    "softmax_loss_ndl": 1.4,
    "nn_epoch_ndl": 3.0,
}


def test_plan_puts_the_longest_question_alone_and_balances_the_rest():
    groups = together.plan(list(REF), REF, 2)
    assert ["nn_epoch_ndl"] in groups or any("nn_epoch_ndl" in g and len(g) <= 3 for g in groups)
    assert sorted(q for g in groups for q in g) == sorted(REF) and len(groups) == 2
    assert together.plan(list(REF), REF, 1) == [list(REF)]
    assert len(together.plan(["forward"], REF, 4)) == 1


def test_plan_keeps_the_run_order_within_a_group():
    for group in together.plan(list(REF), REF, 2):
        assert group == [q for q in REF if q in group]


@pytest.fixture
def fake_runs(monkeypatch, tmp_path):
    """together.run_all with the worker faked: `behaviour[key]` says what a
    run of `key` (a question, or questions joined by SEVERAL) gives."""
    calls, behaviour = [], {}
    monkeypatch.setattr(together, "sandbox_environment", lambda assignment: None)
    monkeypatch.setattr(together, "build_copy", lambda base, files, dest: dest)
    monkeypatch.setattr(together, "build_runner", lambda dest, assignment, inputs: dest)
    monkeypatch.setattr(sandbox.Group, "create", staticmethod(lambda cpu_tasks: None))
    registry = RunConfig().assignment.registry()

    def run_question(key, copy_dir, runner, out_parent, config, time, keep=None, group=None, names=None, limits=None):
        calls.append(key)
        problem, failing = behaviour.get(key, ("", ()))
        names = names or [c.name for c in registry.producers(key)]
        outcomes = {n: Outcome(n not in failing, value=key) for n in names}
        return QuestionRun(key, outcomes, problem, "", "bwrap", seconds=1.0, limit=time)

    monkeypatch.setattr(together, "run_question", run_question)
    times = {q: TimeLimit(20.0, "limit: test") for q in REF}
    return calls, behaviour, registry, times


def test_a_correct_submission_runs_one_worker_per_group(fake_runs):
    calls, _, registry, times = fake_runs
    runs = together.run_all({}, RunConfig(jobs=2), times, seconds=REF, grouped=True)
    assert len(calls) == 2 and all(SEVERAL in c or c == "nn_epoch_ndl" for c in calls)
    assert set(runs) == set(REF) and all(r.question == q for q, r in runs.items())
    assert all(set(r.outcomes) == {c.name for c in registry.producers(q)} for q, r in runs.items())


def test_a_question_whose_case_raised_in_its_group_is_run_again_alone_and_that_counts(fake_runs):
    calls, behaviour, registry, times = fake_runs
    config = RunConfig(jobs=1)
    key = SEVERAL.join(together.plan(list(registry.run_order), REF, 1)[0])
    failing = registry.producers("backward")[0].name
    behaviour[key] = ("", (failing,))
    runs = together.run_all({}, config, times, seconds=REF, grouped=True)
    assert calls == [key, "backward"]
    assert all(o.value == "backward" for o in runs["backward"].outcomes.values())  # its own run's
    assert all(o.value == key for o in runs["forward"].outcomes.values())


def test_a_group_that_timed_out_runs_each_of_its_questions_alone(fake_runs):
    calls, behaviour, registry, times = fake_runs
    key = SEVERAL.join(together.plan(list(registry.run_order), REF, 1)[0])
    behaviour[key] = ("timed out", ())
    runs = together.run_all({}, RunConfig(jobs=1), times, seconds=REF, grouped=True)
    assert calls[0] == key and sorted(calls[1:]) == sorted(REF)
    assert all(r.question == q and not r.problem for q, r in runs.items())


def test_on_done_hears_of_every_question(fake_runs):
    _, _, _, times = fake_runs
    heard = []
    together.run_all({}, RunConfig(jobs=2), times, seconds=REF, on_done=lambda q, run: heard.append(q))
    assert sorted(heard) == sorted(REF)


def test_a_groups_limits_are_its_longest_questions_time_and_largest_memory():
    config = RunConfig()
    times = {"forward": TimeLimit(20.0, "a"), "nn_epoch_ndl": TimeLimit(35.0, "b")}
    time, box = together.limits(config, ["forward", "nn_epoch_ndl"], times)
    assert time.seconds == 35.0 and box.wall_seconds == 35.0
    assert box.memory_mb == max(config.memory_mb("forward"), config.memory_mb("nn_epoch_ndl"))


def test_a_submission_is_graded_one_question_per_worker_unless_grouped(fake_runs):
    """Grouping is off for a submission's grading: each question runs alone,
    config.jobs at a time, so no question's side effects reach another's."""
    calls, behaviour, registry, times = fake_runs
    runs = together.run_all({}, RunConfig(jobs=2), times, seconds=REF)
    assert sorted(calls) == sorted(registry.run_order) and not any(SEVERAL in c for c in calls)
    assert set(runs) == set(REF)
