"""The regrade's pure parts: provenance comparison, a git submission's
commit read without git, batch.json, and the regrade.csv and audit.log
writers (golden files; regenerate with UPDATE_GOLDEN=1 and review the diff)."""

import os
from pathlib import Path

import pytest

from grader.core.assignment import Assignment
from grader.grading.batch import record as batch_record
from grader.grading.batch import regrade
from grader.grading.report import provenance
from grader.grading.run.config import QuestionLimits, RunConfig

GOLDEN = Path(__file__).parents[1] / "golden" / "regrade"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def golden(name: str, text: str):
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{path} differs; if intended, UPDATE_GOLDEN=1 and review"


def inputs(**changed):
    base = {k: "x" for k in provenance.INPUTS}
    base.update(sandbox_packages=["numpy==1.26.4"], status="graded")
    return {**base, **changed}


def test_reasons_name_each_input_that_differs():
    assert provenance.why_changed(inputs(), inputs()) == ()
    assert provenance.why_changed(inputs(), inputs(submission_sha256="y", reference_sha256="z")) == (
        "submission changed",
        "reference changed",
    )
    assert provenance.why_changed(inputs(), inputs(cases_sha256="y", numpy="2.0")) == (
        "cases changed",
        "grader changed",
    )
    assert provenance.why_changed(inputs(), inputs(scoring="strict")) == ("grader changed",)
    assert provenance.why_changed(inputs(), inputs(sandbox_packages=["numpy==2.0.2"])) == ("packages changed",)
    assert provenance.why_changed({}, inputs()) == ("graded by an older grader (no provenance)",)
    assert provenance.why_changed(inputs(status="grader error"), inputs()) == ("the grader failed on it before",)
    doc = {"extra_data": {"scoring": "contract", "provenance": {**inputs(), "scoring": "contract", "tier": "bwrap"}}}
    assert provenance.inputs(doc) == inputs(scoring="contract")
    assert provenance.inputs({"extra_data": {"provenance": {"seed_id": "abc"}}}) == {}  # an older grader's


def test_a_git_submission_s_commit_is_read_from_its_files_only(tmp_path):
    git = tmp_path / "sub" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    assert provenance.git_commit(tmp_path / "sub") == COMMIT
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text(f"# pack-refs\n{COMMIT} refs/heads/main\n")
    assert provenance.git_commit(tmp_path / "sub") == COMMIT
    (git / "HEAD").write_text("ref: refs/../../../etc/passwd\n")
    assert provenance.git_commit(tmp_path / "sub") == ""
    (git / "HEAD").unlink()
    (git / "HEAD").symlink_to(tmp_path / "elsewhere")  # a link: never followed
    (tmp_path / "elsewhere").write_text(COMMIT)
    assert provenance.git_commit(tmp_path / "sub") == ""
    (tmp_path / "file").mkdir()
    (tmp_path / "file" / ".git").write_text(f"gitdir: {git}\n")  # a .git file pointing elsewhere: ignored
    assert provenance.git_commit(tmp_path / "file") == "" and provenance.git_commit(tmp_path / "none") == ""


def test_the_submission_hash_is_stable_and_sees_a_missing_file(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    files = {"python/a.py": tmp_path / "a.py"}
    one = provenance.submission_sha256(files, ("python/b.py", "python/a.py"))
    assert one == provenance.submission_sha256(dict(files), ("python/a.py", "python/b.py"))
    assert one != provenance.submission_sha256(files, ("python/a.py",))


def test_batch_record_round_trips_and_names_a_bad_field(tmp_path):
    config = RunConfig(jobs=1, tier="bwrap", limits=QuestionLimits(2048, 30.0), score_advisories=True)
    record = batch_record.from_config(tmp_path / "subs", config)
    assert record.assignment is None  # hw1: this repository's
    batch_record.write(tmp_path, record)
    golden(
        "batch.json",
        batch_record.render(batch_record.BatchRecord("/srv/hw1/submissions", None, 2048, 30.0, "bwrap", False, True)),
    )
    assert batch_record.read(tmp_path) == record
    again = record.config()
    assert (again.tier, again.limits.memory_mb, again.limits.seconds, again.score_advisories) == (
        "bwrap",
        2048,
        30.0,
        True,
    ) and again.assignment == Assignment.hw1()
    (tmp_path / "batch.json").write_text(
        (tmp_path / "batch.json").read_text().replace('"memory_mb": 2048', '"memory_mb": "lots"')
    )
    with pytest.raises(batch_record.RecordError, match=r"batch.json: field 'memory_mb': missing or of the wrong"):
        batch_record.read(tmp_path)


def test_batch_record_keeps_the_packages_option_and_reads_an_older_record_without_it(tmp_path):
    chosen = RunConfig(jobs=1, assignment=Assignment.hw1().with_packages("numpy==1.26.4 tqdm==4.66.1"))
    record = batch_record.from_config(tmp_path / "subs", chosen)
    assert record.packages == ("numpy==1.26.4", "tqdm==4.66.1")
    batch_record.write(tmp_path, record)
    again = batch_record.read(tmp_path).config().assignment
    assert again.packages == record.packages and again.packages_from == "--packages"
    declared = batch_record.from_config(tmp_path / "subs", RunConfig(jobs=1))
    assert declared.packages is None  # the declaration, whatever assignment.toml says when regraded
    text = batch_record.render(declared).replace(',\n    "packages": null', "")
    assert '"packages"' not in text
    (tmp_path / "batch.json").write_text(text)
    assert batch_record.read(tmp_path).packages is None
    (tmp_path / "batch.json").write_text(batch_record.render(record).replace('"numpy==1.26.4"', "3"))
    with pytest.raises(batch_record.RecordError, match=r"batch.json: field 'packages': give a list"):
        batch_record.read(tmp_path)


CHANGES = (
    regrade.Change("carol", 40.0, 100.0, ("square_range: failed -> passed",), ("reference changed",)),
    regrade.Change(
        "=HYPERLINK(1)",
        60.0,
        40.0,
        ("double_range: failed -> passed", "square_range: passed -> failed"),
        ("submission changed", "reference changed"),
    ),
    regrade.Change("dave", 40.0, 40.0, (), ("reference changed",)),  # graded again, nothing moved: no row
    regrade.Change("erin", None, 72.5, (), ("new submission",)),
)


def test_regrade_csv_matches_golden():
    golden("regrade.csv", regrade.render_csv(CHANGES))


def test_audit_entry_matches_golden():
    applied = ("carol", "=HYPERLINK(1)", "dave", "erin")
    golden("audit.log", regrade.audit_entry(CHANGES, applied, "2026-02-02T10:00:00Z", "prof (sudo by\tta)", "out/hw1"))
