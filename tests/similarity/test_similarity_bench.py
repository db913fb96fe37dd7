"""The similarity bench's own parts on a small class (its 300-submission
run is `make bench`), and the proof that the synthetic class the
similarity tests use is made of correct solutions (graded, slow)."""

import random
import zipfile

import pytest
import similarity_class as sc

from benchmarks import similarity as bench
from grader import HANDOUT
from grader.core.assignment import Assignment
from grader.grading.report.orchestrate import grade_submission
from grader.similarity.analysis import analyse
from grader.similarity.template import load_template


def test_bench_class_differs_per_submission_and_shares_runs(tmp_path):
    folder = bench.synthetic_class(tmp_path, count=6)
    assert sorted(p.name for p in folder.iterdir()) == [
        "student000.zip",
        "student001",
        "student002",
        "student003.zip",
        "student004",
        "student005",
    ]
    with zipfile.ZipFile(folder / "student000.zip") as archive:
        assert "student000/python/needle/autograd.py" in archive.namelist()
    analysis = analyse(folder, None, load_template(HANDOUT, Assignment.hw1().student_files))
    assert analysis.notes == ()
    values = [p.similarity for p in analysis.pairs]
    assert len(values) == 15 and 0 < min(values) and max(values) < 0.7  # shared runs, no copies


def test_bench_reports_time_memory_and_the_baseline(capsys):
    assert bench.speed(count=5)
    line = capsys.readouterr().out
    assert line.startswith("grader similarity, 5 submissions (10 pairs): ") and "peak RSS" in line
    assert "reading and tokenizing alone" in line and line.rstrip().endswith(")")


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("who", ["terse", "verbose", "methods", "classmate"])
def test_the_synthetic_class_is_correct(tmp_path, who):
    """Independent means correct too: each complete solution, and a
    classmate assembled from parts, scores 100."""
    files = sc.classmate(random.Random(5), sc.variants()) if who == "classmate" else sc.independent(who)
    report = grade_submission(sc.build.write_submission(tmp_path / who, files))
    assert report.score == report.max_score, [c.output for c in report.cases if not c.passed][:3]
