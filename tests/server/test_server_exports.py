"""Exports an LMS takes: the Canvas, Moodle and plain writers against golden
files (points per assignment that add up to the gradebook's total, e-mail and
student ID), refusals that name who cannot be identified, and `grader
gradebook --format` on a real SQLite file with a roster's student_id column."""

import datetime as dt
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))

from grader.cli import main as grader_main  # noqa: E402
from grader.server.accounts import users as accounts  # noqa: E402
from grader.server.gradebook import exports, load, scores  # noqa: E402
from grader.server.store import protocol as store  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402

pytestmark = pytest.mark.server
GOLDEN = Path(__file__).parent / "golden" / "exports"
WHEN = dt.datetime(2026, 11, 20, 12, 0)


def book():
    questions = (
        load.Column("hw1/forward", "hw1", 10.0, 3, None),
        load.Column("hw1/backward", "hw1", 25.0, 3, None),
        load.Column("hw2/mlp", "hw2", 5.0, 0, None),
    )
    attempts = [
        load.Attempt("b1", "ann", "hw1/forward", "batch out", WHEN, 0.5, 1, 2, False, on_time=0.5),
        load.Attempt("b1", "ann", "hw1/backward", "batch out", WHEN, 1.0, 2, 2, False, on_time=1.0),
        load.Attempt("s1", "ann", "hw2/mlp", "server", WHEN, 0.6, 3, 5, False, on_time=0.6),
        load.Attempt("b2", "=bob", "hw1/forward", "batch out", WHEN, 0.25, 1, 4, False, on_time=0.25),
    ]
    return scores.assemble(questions, {"ann": 2, "=bob": 3, "cy": 4}, attempts, [], {})


PEOPLE = {
    "ann": exports.Person("ann", "ann@uni.edu", "S001"),
    "=bob": exports.Person("=bob", "bob@uni.edu", "S002"),
    "cy": exports.Person("cy", "", "S003"),
}


@pytest.mark.parametrize("fmt", ["plain", "canvas", "moodle"])
def test_each_writer_matches_its_golden_file(fmt):
    text = exports.WRITERS[fmt](book(), PEOPLE)
    if os.environ.get("UPDATE_GOLDEN"):
        (GOLDEN / f"{fmt}.csv").write_text(text, newline="")
    assert text == (GOLDEN / f"{fmt}.csv").read_bytes().decode("utf-8")  # UPDATE_GOLDEN=1 rewrites it


def test_an_assignment_that_needs_attention_gets_no_grade_not_a_zero():
    questions = (load.Column("hw1/forward", "hw1", 10.0, 3, None), load.Column("hw2/mlp", "hw2", 5.0, 0, None))
    attempts = [
        load.Attempt(
            "b1",
            "ann",
            "hw1/forward",
            "batch out",
            WHEN,
            0.0,
            0,
            0,
            False,
            attention="refused: not a readable zip file",
        ),
        load.Attempt("s1", "ann", "hw2/mlp", "server", WHEN, 0.6, 3, 5, False, on_time=0.6),
    ]
    built = scores.assemble(questions, {"ann": 2}, attempts, [], {})
    assert exports.canvas_csv(built, PEOPLE).splitlines()[2] == "ann,,S001,,,,3.00"
    assert exports.plain_csv(built, PEOPLE).splitlines()[1] == "ann,ann@uni.edu,S001,,3.00,3.00,15.00"


def test_the_points_add_up_to_the_gradebook_s_total():
    built = book()
    _, maxima, per = exports.assignment_points(built)
    assert sum(maxima) == built.max_points
    for row in built.rows:
        assert sum(per[row.name]) == pytest.approx(row.total * built.max_points / 100, abs=0.006)


def test_canvas_refuses_a_student_without_an_id_and_moodle_one_without_email_or_id():
    people = {**PEOPLE, "cy": exports.Person("cy")}
    with pytest.raises(exports.ExportError, match=r"^--format canvas: no student ID for cy; Canvas matches rows"):
        exports.canvas_csv(book(), people)
    with pytest.raises(exports.ExportError, match=r"^--format moodle: no e-mail or student ID for cy; "):
        exports.moodle_csv(book(), people)


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'g.db'}"
    engine = make_engine(url)
    accounts.add_users(
        engine, [("prof", "instructor", "prof@uni.edu"), ("ann", "student", "ann@uni.edu"), ("ben", "student", None)]
    )
    with engine.begin() as conn:
        store.publish_job("hw1", "forward", 1, [1, 2], 1e-5, 1e-5, 10.0, None)(conn)
        sub = store.submission_job("hw1", "forward", 2)(conn)
        store.insert_cases(conn, [store.CaseWrite(sub.id, i, i == 0, str(i), "1") for i in range(2)])
    engine.dispose()
    return url


def test_gradebook_exports_canvas_with_the_roster_s_ids(db, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,email,student_id\nann,ann@uni.edu,S001\nben,,S002\n")
    out = tmp_path / "canvas.csv"
    assert grader_main(["gradebook", "--db", db, "--out", str(out), "--format", "canvas", "--roster", str(roster)]) == 0
    assert out.read_text().splitlines() == [
        "Student,ID,SIS User ID,SIS Login ID,Section,hw1",
        "Points Possible,,,,,10.00",
        "ann,,S001,,,5.00",
        "ben,,S002,,,0.00",
    ]
    assert "(canvas): 2 students" in capsys.readouterr().out


def test_an_export_that_cannot_identify_everyone_writes_nothing(db, tmp_path, capsys):
    out = tmp_path / "canvas.csv"
    assert grader_main(["gradebook", "--db", db, "--out", str(out), "--format", "canvas"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("grader gradebook: --format canvas: no student ID for ann, ben;")
    assert err.strip().endswith("nothing written") and not out.exists()
    roster = tmp_path / "r.csv"
    roster.write_text("name,id\nann,1\n")
    assert grader_main(["gradebook", "--db", db, "--out", str(out), "--format", "plain", "--roster", str(roster)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"grader gradebook: --roster {roster}: needs a header line with 'name' "
        "and 'student_id' columns; nothing written"
    )
    assert not out.exists()
