"""Time policy, driven as an instructor would: a real server on loopback, students
answering over HTTP, and the CLI (`grader course|deadline|extension|changes`)
on the same database. Lateness is judged at read time, so a moved deadline or
an extension re-judges earlier answers; a late penalty applies as declared;
late days are spent from the course's budget; every deadline echo names the
course's zone and UTC; a republish re-judges stored answers; every change is
logged and shown."""

import datetime as dt
import json
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, sqlite_rows  # noqa: E402

from grader.cli import main as grader_main  # noqa: E402
from grader.server.gradebook import scores  # noqa: E402
from grader.server.store.db import make_engine  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture
def course(tmp_path):
    """A server with prof, ann and bob; hw1/forward published (3 cases: 1, 2, 3, 10 points),
    ann answered all right, bob two of three: both now, with no deadline yet."""
    db = tmp_path / "grader.db"
    url = f"sqlite:///{db}"
    keys = {
        name: add_user(url, name, role)
        for name, role in (("prof", "instructor"), ("ann", "student"), ("bob", "student"))
    }
    server = Server(db).start()
    assert (
        server.post("publish", keys["prof"], [1, 2, 3], assignment="hw1", problem="forward", weight="10").status_code
        == 200
    )
    answer(server, keys["ann"], [1, 2, 3])
    answer(server, keys["bob"], [1, 2, 0])
    yield server, url, keys
    server.stop()


def answer(server, key, values, problem="forward"):
    sub = server.post("submit", key, assignment="hw1", problem=problem).json()
    return [
        server.post("submit_test", key, json.dumps(v), submission_id=sub["submission_id"], test_case_index=i).json()
        for i, v in enumerate(values)
    ]


def cell(url, name, label="hw1/forward"):
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            book = scores.build(conn)
    finally:
        engine.dispose()
    row = next(r for r in book.rows if r.name == name)
    return row.cells[[q.label for q in book.questions].index(label)]


def cli(capsys, *args):
    code = grader_main(list(args))
    out, err = capsys.readouterr()
    return code, out.strip(), err.strip()


def iso(when):
    return when.replace(microsecond=0).isoformat() + "+00:00"


NOW = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def test_a_moved_deadline_and_an_extension_re_judge_earlier_answers(course, capsys):
    server, url, keys = course
    assert not cell(url, "ann").late
    code, out, _ = cli(
        capsys, "deadline", "hw1/forward", iso(NOW - dt.timedelta(days=365)), "--db", url, "--by", "prof"
    )
    assert code == 0 and out.startswith("hw1/forward due ") and "(was none)" in out
    ann, bob = cell(url, "ann"), cell(url, "bob")  # a year earlier: every answer already given is now late
    assert (ann.late, ann.on_time, ann.score) == (True, 0.0, 1.0)
    assert (bob.late, bob.on_time) == (True, 0.0)
    code, out, _ = cli(
        capsys, "extension", "grant", "ann", "--until", iso(NOW + dt.timedelta(days=1)), "--db", url, "--by", "prof"
    )
    assert code == 0 and out.startswith("ann: hw1/forward due ")
    assert (cell(url, "ann").late, cell(url, "ann").on_time) == (False, 1.0)  # her extension re-judged her answers
    assert cell(url, "bob").late  # bob's deadline did not move
    code, out, _ = cli(capsys, "deadline", "hw1/forward", iso(NOW + dt.timedelta(days=30)), "--db", url, "--by", "prof")
    assert code == 0 and not cell(url, "bob").late  # moved later: on time again
    code, out, _ = cli(capsys, "changes", "--db", url)
    lines = out.splitlines()
    assert len(lines) == 3 and all("prof" in line for line in lines)
    assert "  deadline hw1/forward: " in lines[0] and "  extension hw1 ann: " in lines[1]
    code, out, _ = cli(capsys, "changes", "--student", "bob", "--db", url)
    assert "extension" not in out  # ann's extension is hers alone
    # her page shows the deadline in force for her and the log, and the gradebook the log too
    me = requests.get(
        server.url + "gradebook/student",
        params={"name": "ann"},
        headers={"Authorization": f"Bearer {keys['prof']}"},
        timeout=30,
    ).text
    assert 'id="changes"' in me and "extension hw1 ann" in me
    book = requests.get(server.url + "gradebook", headers={"Authorization": f"Bearer {keys['prof']}"}, timeout=30)
    assert book.text.count('class="change"') == 3


def test_a_late_penalty_applies_as_declared_and_late_days_come_from_the_budget(course, capsys):
    _, url, _ = course
    due = iso(NOW - dt.timedelta(hours=36))  # the answers came in the 2nd started day late
    assert cli(capsys, "deadline", "hw1/forward", due, "--db", url)[0] == 0
    assert cell(url, "ann").score == 1.0  # no penalty by default: late, counted in full
    code, out, _ = cli(capsys, "course", "set-penalty", "per day", "--percent", "10", "--db", url)
    assert code == 0 and "late penalty of hw1: per day: 10% of a late answer per started day late" in out
    ann = cell(url, "ann")
    assert (ann.score, ann.penalty, ann.late) == (pytest.approx(0.8), pytest.approx(0.2), True)
    assert cell(url, "bob").score == pytest.approx(0.8 * 2 / 3)
    assert cli(capsys, "course", "set-penalty", "zero after", "--cutoff", "1d", "--db", url)[0] == 0
    assert cell(url, "ann").score == 0.0  # 36 hours late, the cutoff is 24
    assert cli(capsys, "course", "set-late-days", "1", "--db", url)[0] == 0
    assert (cell(url, "ann").score, cell(url, "ann").late_days) == (0.0, 0)  # 1 day does not cover 36 h: none spent
    assert cli(capsys, "course", "set-late-days", "2", "--db", url)[0] == 0
    ann = cell(url, "ann")
    assert (ann.score, ann.late, ann.late_days, ann.penalty) == (1.0, False, 2, 0.0)
    assert cli(capsys, "course", "clear-penalty", "--db", url)[0] == 0
    assert "late penalty" in cli(capsys, "changes", "--db", url)[1]


def test_a_changed_deadline_is_echoed_in_the_course_zone_and_utc(course, capsys):
    server, url, keys = course
    code, _, err = cli(capsys, "deadline", "hw1/forward", "2026-02-01T23:59", "--db", url)
    assert code == 2 and "has no time zone and the course declares none" in err
    code, out, _ = cli(capsys, "course", "set-zone", "Europe/Zurich", "--db", url)
    assert code == 0 and out.startswith("course zone: Europe/Zurich")
    code, out, _ = cli(capsys, "deadline", "hw1/forward", "2026-02-01T23:59", "--db", url)
    assert out == "hw1/forward due 2026-02-01 23:59 CET (2026-02-01 22:59 UTC) (was none)"
    code, out, _ = cli(capsys, "extension", "grant", "bob", "--extra", "2d", "--db", url)
    assert (
        out == "bob: hw1/forward due 2026-02-03 23:59 CET (2026-02-03 22:59 UTC) "
        "(was 2026-02-01 23:59 CET (2026-02-01 22:59 UTC))"
    )
    assert cli(capsys, "extension", "list", "--db", url)[1].startswith("bob: hw1 (every question) +2d (granted ")
    # /publish takes the course's zone for a deadline typed without one, and echoes both
    r = server.post(
        "publish", keys["prof"], [1, 2, 3], assignment="hw1", problem="forward", deadline="2026-07-01T12:00"
    )
    assert r.status_code == 200
    assert (r.json()["deadline"], r.json()["deadline_shown"]) == (
        "2026-07-01T10:00:00+00:00",
        "2026-07-01 12:00 CEST (2026-07-01 10:00 UTC)",
    )
    assert "deadline hw1/forward: 2026-02-01 23:59 CET" in cli(capsys, "changes", "--db", url)[1]


def test_a_republish_re_judges_stored_answers_and_says_so(course, capsys):
    server, url, keys = course
    assert cell(url, "bob").score == pytest.approx(2 / 3)
    r = server.post("publish", keys["prof"], [1, 2, 0], assignment="hw1", problem="forward")  # case 2 corrected
    assert r.status_code == 200
    assert r.json()["regraded"] == {"judged": 6, "now_right": 1, "now_wrong": 1, "kept": 0}
    bob, ann = cell(url, "bob"), cell(url, "ann")
    assert (bob.score, bob.previous) == (1.0, pytest.approx(2 / 3))
    assert ann.score == pytest.approx(2 / 3)
    me = requests.Session()
    me.post(server.url + "login", data={"key": keys["bob"]}, timeout=30)
    page = me.get(server.url + "me", timeout=30).text
    assert "regraded (was 67%)" in page and "regrade hw1/forward" in page
    assert page.count('class="ok"') == 3  # every case of his submission now shows right
    line = cli(capsys, "changes", "--db", url)[1]
    assert "regrade hw1/forward: earlier published answers -> publication 2: re-judged 6 answers" in line
    # the same answers again: nothing to re-judge, nothing logged
    assert "regraded" not in server.post("publish", keys["prof"], [1, 2, 0], assignment="hw1", problem="forward").json()
    assert sqlite_rows(Path(url[len("sqlite:///") :]), "select count(*) from verdicts") == [(6,)]


@pytest.mark.parametrize(
    "args, message",
    [
        (["extension", "grant", "nobody", "--extra", "1d"], "no student named 'nobody'"),
        (["extension", "grant", "ann"], "give the new deadline (--until) or the time added (--extra), one of them"),
        (["extension", "grant", "ann", "--extra", "soon"], "--extra: 'soon' is not a duration"),
        (["extension", "grant", "ann", "--extra", "1d", "--question", "nope"], "hw1 has no question 'nope'"),
        (["extension", "clear", "ann"], "ann has no extension for hw1"),
        (["deadline", "hw1/forward", "tomorrow"], "deadline: 'tomorrow' is not a time"),
        (["deadline", "hw9", "2026-02-01T23:59Z"], "assignment 'hw9' has no published question"),
        (["course", "set-zone", "Mars/Olympus"], "'Mars/Olympus' is not a time zone"),
        (["course", "set-late-days", "-1"], "give a whole number of days"),
        (["course", "set-penalty", "per day"], "field 'policy.time.percent_per_day': give a percent"),
        (["course", "set-penalty", "zero after"], '"zero after" needs one'),
        (["course", "set-penalty", "half"], "'half' is not one of"),
        (["course", "show", "--cutoff", "1d"], "--percent and --cutoff are for `grader course set-penalty`"),
    ],
)
def test_a_bad_time_command_is_one_line_and_changes_nothing(course, capsys, args, message):
    _, url, _ = course
    code, out, err = cli(capsys, *args, "--db", url)
    assert code == 2 and out == "" and message in err and "\n" not in err
    db = Path(url[len("sqlite:///") :])
    assert sqlite_rows(db, "select count(*) from time_changes") == [(0,)]
    assert sqlite_rows(db, "select count(*) from extensions") == [(0,)]
    assert sqlite_rows(db, "select count(*) from settings where name like 'course:%' or name like 'late:%'") == [(0,)]


def test_student_ids_from_the_users_command_and_the_roster_reach_the_canvas_export(course, capsys, tmp_path):
    _, url, _ = course
    roster = tmp_path / "roster.csv"
    roster.write_text("name,email,student_id\nann,ann@uni.edu,S001\nbob,bob@uni.edu,S002\ncy,cy@uni.edu,S003\n")
    assert cli(capsys, "users", "import", str(roster), "--db", url, "--out", str(tmp_path / "keys.csv"))[0] == 0
    assert sqlite_rows(
        Path(url[len("sqlite:///") :]), "select name, student_id from users where role = 'student' order by name"
    ) == [("ann", "S001"), ("bob", "S002"), ("cy", "S003")]
    code, _, err = cli(capsys, "users", "add", "dee", "--student-id", "\x00", "--db", url)
    assert code == 1 and "student ID" in err
    out = tmp_path / "canvas.csv"
    assert cli(capsys, "gradebook", "--format", "canvas", "--out", str(out), "--db", url)[0] == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("Student,ID,SIS User ID,SIS Login ID,Section,")
    assert any(line.startswith("ann,,S001,,,") for line in lines)  # the ID stored on her account
