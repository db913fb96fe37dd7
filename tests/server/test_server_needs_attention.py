"""Needs attention, not zero: archive debris is never a submission; a result the
grader could not grade (a truncated zip is refused, the grader broke) imports
with its status and reason, and the gradebook page, a student's page and the
CSV show it as "needs attention" with the reason, apart from a real 0."""

import json
import sys
import zipfile
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, record_batch, sqlite_rows  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.grading.batch import names as batch_names
from grader.grading.report import results as report  # noqa: E402
from grader.grading.run.submission import SubmissionError, extract_zip  # noqa: E402
from grader.server.gradebook import importer  # noqa: E402
from grader.shipped.cases import QUESTIONS  # noqa: E402

pytestmark = pytest.mark.server

ZERO = [("forward_divide", "forward", "Q1.1", 0.0, 5.0, "EWiseDiv: values differ")]


def truncated_zip(tmp_path) -> Path:
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w") as z:
        z.writestr("needle/autograd.py", "x = 1\n" * 2000)
    cut = tmp_path / "ann.zip"
    cut.write_bytes(whole.read_bytes()[:300])
    return cut


def refused_json(reason: str, status: str = "refused") -> str:
    """What grade-batch writes for a submission it could not read (orchestrate.py: no cases, the
    reason as the first note, provenance status refused)."""
    rep = report.Report("x", (), report.question_scores((), QUESTIONS), "none", 0.1, (reason,))
    doc = json.loads(report.gradescope_json(rep))
    doc["extra_data"]["provenance"] = {"status": status, "submission_sha256": "0" * 64}
    return json.dumps(doc)


def graded_json(cases) -> str:
    cases = tuple(report.CaseResult(n, q, num, s, m, s == m, out, False) for n, q, num, s, m, out in cases)
    return report.gradescope_json(report.Report("x", cases, report.question_scores(cases, QUESTIONS), "bwrap", 1.0))


def test_archive_debris_is_never_a_submission(tmp_path):
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (tmp_path / "ann").mkdir()
    (tmp_path / "ben.zip").write_bytes(b"PK")
    assert [p.name for p in sorted(tmp_path.iterdir()) if batch_names.is_candidate(p)] == ["ann", "ben.zip"]
    assert [name for name, _ in batch_names.find_submissions(tmp_path)] == ["ann", "ben"]


def test_a_refusal_and_a_grader_error_keep_their_reason_and_a_graded_result_has_none(tmp_path):
    with pytest.raises(SubmissionError) as refused:
        extract_zip(truncated_zip(tmp_path), tmp_path / "x")
    reason = str(refused.value)
    assert importer.parse_result(refused_json(reason).encode())[4:] == ("refused", reason)
    broke = importer.parse_result(refused_json("grader failed: worker died", "grader error").encode())
    assert broke[4:] == ("grader error", "grader failed: worker died")
    assert importer.parse_result(graded_json(ZERO).encode())[4:] == ("graded", "")


def test_an_unknown_grading_status_stops_the_import_naming_the_field():
    with pytest.raises(
        importer.BadResult,
        match=r"^extra_data\.provenance\.status: must be one of graded, "
        r"refused, grader error, got 'lost'$",
    ):
        importer.parse_result(refused_json("r", "lost").encode())


@pytest.fixture
def served(tmp_path):
    db = tmp_path / "grader.db"
    key = add_user(f"sqlite:///{db}", "prof", "instructor")
    add_user(f"sqlite:///{db}", "ann")
    add_user(f"sqlite:///{db}", "ben")
    with pytest.raises(SubmissionError) as refused:
        extract_zip(truncated_zip(tmp_path), tmp_path / "x")
    out = tmp_path / "out"
    for name, text in (("ann", refused_json(str(refused.value))), ("ben", graded_json(ZERO))):
        (out / name).mkdir(parents=True)
        (out / name / "results.json").write_text(text)
    record_batch(out)
    assert grader_main(["import-batch", str(out), "--db", f"sqlite:///{db}", "--assignment", "hw1"]) == 0
    server = Server(db).start()
    yield server, key, str(refused.value), db
    server.stop()


def test_an_unreadable_zip_needs_attention_on_the_pages_and_in_the_csv_and_a_real_zero_does_not(served):
    server, key, reason, db = served
    assert sqlite_rows(db, "select name, status, reason from batch_results order by name") == [
        ("ann", "refused", reason),
        ("ben", "graded", ""),
    ]
    auth = {"Authorization": f"Bearer {key}"}
    page = requests.get(server.url + "gradebook", headers=auth, timeout=30)
    assert page.status_code == 200
    ann_row = page.text.split('data-name="ann"')[1].split("</tr>")[0]
    ben_row = page.text.split('data-name="ben"')[1].split("</tr>")[0]
    assert 'class="attention"' in ann_row and "not a readable zip file" in ann_row
    assert "needs attention" not in ben_row
    student = requests.get(server.url + "gradebook/student", params={"name": "ann"}, headers=auth, timeout=30)
    assert "needs attention" in student.text and "not a readable zip file" in student.text
    assert "see the grader&#39;s output" not in student.text
    lines = requests.get(server.url + "gradebook.csv", params={"user_key": key}, timeout=30).text.splitlines()
    header = lines[0].split(",")
    assert header[-2:] == ["late", "needs attention"]
    ann, ben = (next(line for line in lines if line.startswith(n + ",")) for n in ("ann", "ben"))
    forward = header.index("hw1/forward")
    assert ann.split(",")[forward] == "" and ben.split(",")[forward] == "0.00"
    assert "hw1/forward: refused: " in ann and "not a readable zip file" in ann
    assert "needs attention" not in ben and "refused" not in ben
