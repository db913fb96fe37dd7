"""workers.run_all: each question in a worker of its own, config.jobs at a
time (and one more set up beside them, in a batch two), and with isolate_hangs (a submission's grading) a case that stops its
worker costs that case, the rest of its question run again without it, and
the registry's SHARED_WORKERS questions in one worker unless it stops. The
sandbox is faked: what is tested is which runs happen and which outcomes count."""

import threading
import time as clock

import pytest

from grader import sandbox
from grader.grading.run import slots, workers
from grader.grading.run.config import RunConfig
from grader.grading.run.outcomes import Outcome
from grader.grading.run.time_limits import TimeLimit
from grader.grading.run.workers import ONLY, SEVERAL, QuestionRun

QUESTIONS = ("forward", "backward", "topo_sort", "compute_gradient", "softmax_loss_ndl", "nn_epoch_ndl")
NO_VALUE = Outcome(False, problem="no value: the worker stopped before this case reported")


@pytest.fixture
def under_way():
    """How many faked runs are under way now, and the most at once."""
    return {"now": 0, "most": 0}


@pytest.fixture
def seen_limits():
    """The TimeLimit of each faked run, in the order they started (as `calls`)."""
    return []


@pytest.fixture
def exits_on():
    """Cases at which a faked run of several questions exits cleanly (no problem), or "import" (an import error)."""
    return set()


@pytest.fixture
def fake_runs(monkeypatch, under_way, seen_limits, exits_on):
    """run_all with the worker faked: a run stops at the first case named in `hangs_on`."""
    calls, hangs_on = [], set()
    lock = threading.Lock()
    monkeypatch.setattr(workers, "sandbox_environment", lambda assignment: None)
    monkeypatch.setattr(workers, "build_copy", lambda base, files, dest: dest)
    monkeypatch.setattr(workers, "build_runner", lambda dest, assignment, inputs: dest)
    monkeypatch.setattr(sandbox.Group, "create", staticmethod(lambda cpu_tasks: None))
    registry = RunConfig().assignment.registry()

    def run_question(key, copy_dir, runner, out_parent, config, time, keep=None, group=None, *args, **kwargs):
        with lock:  # both lists in one order
            calls.append(key)
            seen_limits.append(time)
        with lock:
            under_way["now"] += 1
            under_way["most"] = max(under_way["most"], under_way["now"])
        clock.sleep(0.05)
        with lock:
            under_way["now"] -= 1
        question, _, chosen = key.partition(ONLY)
        names = (
            chosen.split(",") if chosen else [c.name for q in question.split(SEVERAL) for c in registry.producers(q)]
        )
        outcomes, problem, exited = {}, "", False
        several = SEVERAL in question
        if several and "import" in exits_on:
            return QuestionRun(key, {n: NO_VALUE for n in names}, "", "", "bwrap", "ImportError: x", 1.0, time)
        for name in names:
            exited = exited or (several and name in exits_on)
            if problem or name in hangs_on:
                problem, outcomes[name] = "timeout after 20 s", NO_VALUE
            else:
                outcomes[name] = NO_VALUE if exited else Outcome(True, value=key)
        return QuestionRun(key, outcomes, problem, "", "bwrap", seconds=1.0, limit=time)

    monkeypatch.setattr(workers, "run_question", run_question)
    times = {q: TimeLimit(20.0, "limit: test") for q in QUESTIONS}
    return calls, hangs_on, registry, times


SHARED = ("forward", "backward", "topo_sort", "compute_gradient")  # hw1's SHARED_WORKERS


def test_the_shared_questions_run_in_one_worker_under_the_sum_of_their_limits(fake_runs, seen_limits):
    calls, _, registry, times = fake_runs
    assert registry.shared_workers == (SHARED,)
    times = {**times, "topo_sort": TimeLimit(5.0, "limit: test")}
    runs = workers.run_all({}, RunConfig(jobs=2), times, isolate_hangs=True)
    assert sorted(calls) == sorted(["nn_epoch_ndl", "softmax_loss_ndl", SEVERAL.join(SHARED)])
    assert seen_limits[calls.index(SEVERAL.join(SHARED))].seconds == 65.0  # 20 + 20 + 5 + 20
    assert set(runs) == set(QUESTIONS) and all(r.question == q for q, r in runs.items())
    for q, run in runs.items():
        assert set(run.outcomes) == {c.name for c in registry.producers(q)} and run.limit == times[q]
        assert all(o.ok and o.value == (SEVERAL.join(SHARED) if q in SHARED else q) for o in run.outcomes.values())


def test_without_isolate_hangs_each_question_runs_in_a_worker_of_its_own(fake_runs):
    calls, _, registry, times = fake_runs
    runs = workers.run_all({}, RunConfig(jobs=2), times)
    assert sorted(calls) == sorted(registry.run_order) and not any(SEVERAL in c for c in calls)
    assert set(runs) == set(QUESTIONS) and all(r.question == q for q, r in runs.items())


@pytest.mark.parametrize("how", ["exit", "import"])
def test_a_shared_worker_that_exits_early_or_cannot_import_runs_each_question_alone(fake_runs, exits_on, how):
    """No problem reported, but cases without a value (an os._exit, say), or
    an import failure: each question alone decides what it costs."""
    calls, _, registry, times = fake_runs
    exits_on.add("import" if how == "import" else [c.name for c in registry.producers("topo_sort")][1])
    runs = workers.run_all({}, RunConfig(jobs=1), times, questions=list(SHARED), isolate_hangs=True)
    assert calls[0] == SEVERAL.join(SHARED) and sorted(calls[1:]) == sorted(SHARED)
    assert all(o.ok and o.value == q for q, run in runs.items() for o in run.outcomes.values())


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_questions_of_a_stopped_shared_worker_run_jobs_at_a_time(fake_runs, under_way, jobs):
    """Alone, they run side by side as separate questions did, --jobs at a
    time: a hang-heavy submission takes no longer than before sharing."""
    _, hangs_on, registry, times = fake_runs
    hangs_on.add([c.name for c in registry.producers("forward")][0])
    workers.run_all({}, RunConfig(jobs=jobs), times, questions=list(SHARED), isolate_hangs=True)
    assert under_way["most"] == jobs


def test_a_stopped_shared_worker_runs_each_of_its_questions_alone(fake_runs):
    """A hang in the shared worker: each question runs again in a worker of
    its own, its hangs isolated there, so the hang costs its case alone and
    the other questions' values come from their own runs."""
    calls, hangs_on, registry, times = fake_runs
    names = [c.name for c in registry.producers("backward")]
    hangs_on.add(names[2])
    runs = workers.run_all({}, RunConfig(jobs=1), times, questions=list(SHARED), isolate_hangs=True)
    assert calls[0] == SEVERAL.join(SHARED) and set(SHARED) <= set(calls[1:])
    assert runs["backward"].hung == (names[2],) and not runs["backward"].problem
    for q, run in runs.items():
        lost = {n for n, o in run.outcomes.items() if not o.ok}
        assert lost == ({names[2]} if q == "backward" else set()), q
        assert all(o.value.partition(ONLY)[0] == q for o in run.outcomes.values() if o.ok), q


@pytest.mark.parametrize("in_slots", [False, True])
def test_jobs_questions_at_once_and_more_set_up(fake_runs, under_way, tmp_path, in_slots):
    """config.jobs questions under way at once, and one more, so that it is
    set up and waiting when a slot comes free: in a batch's slots or, for a
    single grade, in slots of its own (both bound the running workers). In
    a batch, one more again, waiting for the submission's stage pass, so
    that the pass is handed on the moment a set-up question takes its slot."""
    *_, times = fake_runs
    config = RunConfig(jobs=2, slots=slots.make(tmp_path / "slots", 2) if in_slots else None)
    workers.run_all({}, config, times)
    assert under_way["most"] == (4 if in_slots else 3)


def test_jobs_1_sets_nothing_up_beside_its_one_worker(fake_runs, under_way):
    """--jobs 1 is one core's work: one question under way at a time."""
    *_, times = fake_runs
    workers.run_all({}, RunConfig(jobs=1), times)
    assert under_way["most"] == 1


@pytest.mark.parametrize("in_slots", [False, True])
def test_each_question_takes_its_turn_by_its_place_in_the_run_order(fake_runs, monkeypatch, tmp_path, in_slots):
    """A question's turn carries its place in the run order (the longest
    first), which its stage pass goes by; the batch's rank is kept."""
    calls, _, registry, times = fake_runs
    seen, fake = {}, workers.run_question

    def run_question(key, copy_dir, runner, out_parent, config, *args, **kwargs):
        seen[key] = config.slots
        return fake(key, copy_dir, runner, out_parent, config, *args, **kwargs)

    monkeypatch.setattr(workers, "run_question", run_question)
    shared = slots.make(tmp_path / "slots", 2).for_rank(5) if in_slots else None
    workers.run_all({}, RunConfig(jobs=2, slots=shared), times)
    assert {q: turn.order for q, turn in seen.items()} == {q: k for k, q in enumerate(registry.run_order)}
    assert all(isinstance(turn, slots.Slots if in_slots else slots.LocalSlots) for turn in seen.values())
    if in_slots:
        assert {turn.rank for turn in seen.values()} == {5}
    else:  # one grade's slots, shared by all its questions
        assert len({id(turn._running) for turn in seen.values()}) == 1


def test_on_done_hears_of_every_question(fake_runs):
    _, _, _, times = fake_runs
    heard = []
    workers.run_all({}, RunConfig(jobs=2), times, on_done=lambda q, run: heard.append(q))
    assert sorted(heard) == sorted(QUESTIONS)


@pytest.mark.parametrize("isolate", [True, False])
def test_a_hung_case_costs_its_question_only_with_isolate_hangs(fake_runs, isolate):
    calls, hangs_on, registry, times = fake_runs
    names = [c.name for c in registry.producers("backward")]
    hangs_on.add(names[3])
    heard = {}
    runs = workers.run_all(
        {},
        RunConfig(jobs=1),
        times,
        questions=["backward"],
        isolate_hangs=isolate,
        on_done=lambda q, run: heard.update({q: run}),
    )
    run = runs["backward"]
    assert heard["backward"] is run  # on_done hears the isolated run, not the first one
    lost = {n for n, o in run.outcomes.items() if not o.ok}
    if isolate:
        assert run.hung == (names[3],) and lost == {names[3]} and not run.problem
        assert calls[1].startswith(f"backward{ONLY}") and names[3] not in calls[1].partition(ONLY)[2].split(",")
    else:
        assert lost == set(names[3:]) and calls == ["backward"] and run.problem


def test_kept_outputs_are_never_isolated():
    with pytest.raises(ValueError, match="keep_outputs"):
        workers.run_all({}, RunConfig(), {}, keep_outputs=object(), isolate_hangs=True)
