"""`make bench`'s feedback figure grades a submission carrying one known bug
of the likely-cause catalogue (benchmarks/feedback.py): it is that bug, as
the catalogue's own files make it."""

from benchmarks import feedback as bench_feedback
from grader import REFERENCE
from grader.grading.explain.causes import catalogue, store
from grader.grading.run.config import RunConfig


def test_the_feedback_benchmarks_failing_submission_is_its_known_bug(tmp_path):
    config = RunConfig()
    submission = bench_feedback._mutant(tmp_path, config)
    mutant = next(m for m in catalogue.MUTANTS if m.name == bench_feedback.MUTANT)
    want = store.mutant_files(config.assignment, mutant)
    assert {rel: (submission / rel).read_text() for rel in want} == want
    assert any(text != (REFERENCE / rel).read_text() for rel, text in want.items())
