"""The likely-cause step's run on the course's inputs
(grader/grading/explain/causes/rerun.py): started while the grading still
runs, from the first finished question that failed a case a known bug may
explain, in the grading's own slots; the report is the one a run made when
the diagnosis first asks for it gives. Not for a correct submission, and
not with --jobs 1 (one worker at a time)."""

import dataclasses
import time
from pathlib import Path

import numpy as np
import pytest
from catalogue import build, canonical, mutants

from grader import REFERENCE
from grader.grading.explain.causes import catalogue, rerun
from grader.grading.report.orchestrate import grade_submission
from grader.grading.run.config import RunConfig
from grader.shipped import checks

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
BUG = next(m for m in mutants.MUTANTS if m.name == "divide_scalar_multiplies")
CAUSE = "Likely cause: " + next(m for m in catalogue.MUTANTS if m.name == "divide_scalar_compute_product").message


@pytest.fixture(scope="module")
def buggy(tmp_path_factory):
    sources = build.apply_edits(build.reference_sources(), canonical.BASE + tuple(BUG.edits))
    return build.write_submission(tmp_path_factory.mktemp("buggy") / "sub", sources)


def graded(submission, monkeypatch, jobs=2):
    """The report, when the early run started, and when the grading's last question had finished."""
    started, finished = [], []
    real_background, real_call = rerun.Background, rerun.Early.__call__

    def background(compute, name):
        started.append(time.monotonic())
        return real_background(compute, name)

    def call(self, question, run):
        finished.append(time.monotonic())
        return real_call(self, question, run)

    monkeypatch.setattr(rerun, "Background", background)
    monkeypatch.setattr(rerun.Early, "__call__", call)
    report = grade_submission(submission, RunConfig(jobs=jobs))
    monkeypatch.undo()
    return report, started, finished


def shown(report):
    return [(c.name, c.score, c.output) for c in report.cases]


def test_the_course_run_starts_while_the_grading_runs_and_gives_the_same_report(buggy, monkeypatch):
    report, started, finished = graded(buggy, monkeypatch)
    assert len(started) == 1 and len(finished) == 6, (started, finished)
    assert started[0] <= finished[-1]  # from a question's end, not after the grading
    assert any(CAUSE in c.output for c in report.cases), shown(report)
    # the same report from the run made when the diagnosis asks for it
    monkeypatch.setattr(rerun.Early, "__call__", lambda self, question, run: None)
    late = grade_submission(buggy, RunConfig(jobs=2))
    monkeypatch.undo()
    assert shown(late) == shown(report) and late.score == report.score < 100


def test_no_early_course_run_for_a_correct_submission(monkeypatch):
    report, started, _ = graded(REFERENCE, monkeypatch)
    assert report.score == 100 and started == []


def test_no_early_course_run_with_one_worker_at_a_time(buggy, monkeypatch):
    report, started, finished = graded(buggy, monkeypatch, jobs=1)
    assert started == [] and len(finished) == 6
    assert any(CAUSE in c.output for c in report.cases), shown(report)


def test_a_grading_that_stops_on_an_error_leaves_no_course_run_behind(buggy, monkeypatch):
    """The early run reads the student's files from the grading's scratch
    folder: a grading that raises waits for it before the folder goes."""
    from grader.grading.report import orchestrate

    jobs, real_background, real_again = [], rerun.Background, rerun.again

    def background(compute, name):
        jobs.append(real_background(compute, name))
        return jobs[-1]

    def slow_again(files, own, runs):  # still running when the grading breaks
        time.sleep(2)
        return real_again(files, own, runs)

    def broken(*args, **kwargs):
        raise RuntimeError("the grader broke")

    monkeypatch.setattr(rerun, "Background", background)
    monkeypatch.setattr(rerun, "again", slow_again)
    monkeypatch.setattr(orchestrate, "grade_cases", broken)
    with pytest.raises(RuntimeError, match="the grader broke"):
        grade_submission(buggy, RunConfig(jobs=2))
    assert len(jobs) == 1 and jobs[0]._done.is_set()


def test_the_course_run_is_one_worker_giving_what_a_worker_per_question_gives(buggy, monkeypatch):
    """Its questions' cases run in one sandboxed worker (its hangs isolated
    as in a question's), and each case's value is the one a worker of its
    own computes on the same inputs."""
    from grader import sandbox
    from grader.grading.report import orchestrate
    from grader.grading.run import expected

    config = expected.settled(RunConfig(jobs=2))
    files, _, _, digest = orchestrate._student_files(buggy, buggy, config.assignment)
    own = expected.for_submission(config, digest)
    questions = list(own.inputs.own)
    assert len(questions) > 1, questions
    started, real_run = [], sandbox.run

    def counted(script, args, **kwargs):
        if Path(script).name == "worker_boot.py":  # a case worker (not the tier's probe)
            started.append(args[0])
        return real_run(script, args, **kwargs)

    monkeypatch.setattr(sandbox, "run", counted)
    answers, together = rerun.again(files, own, {})
    assert started == ["+".join(questions)], started
    # the cases the grading's workers were stopped in are left out, with no outcome; the rest as before
    hung = {"forward": ("forward_negate",), "backward": ("backward_negate", "backward_log")}
    grading = {q: dataclasses.replace(together[q], hung=hung.get(q, ())) for q in questions}
    _, without = rerun.again(files, own, grading)
    assert len(started) == 2 and started[1].startswith("+".join(questions) + "@"), started
    left_out = set(started[1].partition("@")[2].split(","))
    assert left_out.isdisjoint({n for names in hung.values() for n in names}) and len(left_out) > 50
    for q in questions:
        assert set(without[q].outcomes) == set(together[q].outcomes) - set(hung.get(q, ())), q
        for name, outcome in without[q].outcomes.items():
            assert outcome.ok == together[q].outcomes[name].ok, name
    monkeypatch.undo()
    apart = expected.run_graded(files, expected.course(own), questions=questions)
    assert set(together) == set(questions) == set(apart)
    for q in questions:
        assert together[q].question == q and set(together[q].outcomes) == set(apart[q].outcomes)
        for name, outcome in apart[q].outcomes.items():
            mine = together[q].outcomes[name]
            assert mine.ok == outcome.ok, (name, mine, outcome)
            if outcome.ok:
                np.testing.assert_equal(mine.value, outcome.value, err_msg=name)
    # the planted bug shows there as in a worker per question: the diagnosis reads these values
    wrong = {
        name
        for runs in (together, apart)
        for c in config.assignment.registry().cases
        if c.question in questions and (name := c.value_key) in answers
        for outcome in [runs[c.question].outcomes.get(name)]
        if outcome is not None and outcome.ok and not checks.check(c, answers[name].value, outcome.value).passed
    }
    assert wrong, "the planted bug changed no value of the rerun questions"


def test_the_early_course_run_waits_for_the_questions_of_its_worker(buggy, monkeypatch):
    """Q1 to Q4 share a worker and run_all reports them one after the other:
    the early run starts at the last of them, whichever showed the need, and
    is given all four runs (their stopped cases are left out of it)."""
    from grader.grading.report import orchestrate
    from grader.grading.run import expected, slots
    from grader.grading.run.workers import QuestionRun

    config = expected.settled(RunConfig(jobs=2))
    files, _, _, digest = orchestrate._student_files(buggy, buggy, config.assignment)
    own = dataclasses.replace(expected.for_submission(config, digest), slots=slots.local(2))
    unit = next(u for u in config.assignment.registry().workers() if "forward" in u)
    assert len(unit) > 1 and set(unit) <= set(own.inputs.own), unit
    given = []

    class Now:  # runs the job at once
        def __init__(self, compute, name):
            given.append(compute())

    monkeypatch.setattr(rerun, "Background", Now)
    monkeypatch.setattr(rerun, "again", lambda files, own, runs: sorted(runs))
    monkeypatch.setattr(rerun.Early, "_explainable", lambda self, question, run: question == unit[0])
    early = rerun.Early(files, own, {})
    for question in unit:
        assert given == [], question
        early(question, QuestionRun(question, {}, "", "", "none"))
    assert given == [sorted(unit)]
