"""The likely-cause step's run on the course's inputs
(grader/grading/explain/causes/rerun.py): started while the grading still
runs, from the first finished question that failed a case a known bug may
explain, in the grading's own slots; the report is the one a run made when
the diagnosis first asks for it gives. Not for a correct submission, and
not with --jobs 1 (one worker at a time)."""

import time

import pytest
from catalogue import build, canonical, mutants

from grader import REFERENCE
from grader.grading.explain.causes import catalogue, rerun
from grader.grading.report.orchestrate import grade_submission
from grader.grading.run.config import RunConfig

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

    def slow_again(files, own):  # still running when the grading breaks
        time.sleep(2)
        return real_again(files, own)

    def broken(*args, **kwargs):
        raise RuntimeError("the grader broke")

    monkeypatch.setattr(rerun, "Background", background)
    monkeypatch.setattr(rerun, "again", slow_again)
    monkeypatch.setattr(orchestrate, "grade_cases", broken)
    with pytest.raises(RuntimeError, match="the grader broke"):
        grade_submission(buggy, RunConfig(jobs=2))
    assert len(jobs) == 1 and jobs[0]._done.is_set()
