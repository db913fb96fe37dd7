"""`grader users` and `grader gradebook` as a user runs them."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, child_env  # noqa: E402


def grader(*args):
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=60
    )


def test_users_add_prints_key_last_and_refuses_duplicates(tmp_path):
    db = f"sqlite:///{tmp_path / 'g.db'}"
    r = grader("users", "add", "Ada Lovelace", "--role", "instructor", "--db", db)
    assert r.returncode == 0
    key = r.stdout.strip().splitlines()[-1]
    assert key.startswith("mg_") and len(key) > 30
    from grader.server.accounts import users as accounts
    from grader.server.store.db import make_engine

    engine = make_engine(db)
    with engine.connect() as conn:
        assert accounts.find_user(conn, key) == accounts.User(1, "Ada Lovelace", "instructor")
    engine.dispose()
    again = grader("users", "add", "Ada Lovelace", "--db", db)
    assert again.returncode == 1
    assert again.stderr == (
        "grader users: name 'Ada Lovelace' is already account 'Ada Lovelace'; pick another, "
        "or leave that person's account as it is\n"
    )


def test_users_import_roster_writes_keys_file(tmp_path):
    db = f"sqlite:///{tmp_path / 'g.db'}"
    roster = tmp_path / "roster.csv"
    roster.write_text("name,role\nalice,student\nbob,\nprof,instructor\n")
    out = tmp_path / "keys.csv"
    r = grader("users", "import", str(roster), "--db", db, "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert [(x["name"], x["role"]) for x in rows] == [("alice", "student"), ("bob", "student"), ("prof", "instructor")]
    assert len({x["key"] for x in rows}) == 3
    assert out.stat().st_mode & 0o077 == 0  # keys are secrets: owner-only


def test_users_import_keys_file_quotes_formula_names(tmp_path):
    db = f"sqlite:///{tmp_path / 'g.db'}"
    roster = tmp_path / "roster.csv"
    roster.write_text("name,role\n\"=cmd|' /C calc'!A0\",student\n@SUM(1),student\n-1,\nalice,instructor\n")
    out = tmp_path / "keys.csv"
    r = grader("users", "import", str(roster), "--db", db, "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert [(x["name"], x["role"]) for x in rows] == [
        ("'=cmd|' /C calc'!A0", "student"),
        ("'@SUM(1)", "student"),
        ("'-1", "student"),
        ("alice", "instructor"),
    ]
    assert all(x["key"].startswith("mg_") and len(x["key"]) > 30 for x in rows)  # keys as made, never quoted
    from grader.server.accounts import users as accounts
    from grader.server.store.db import make_engine

    engine = make_engine(db)
    with engine.connect() as conn:  # the stored names are the real ones; only the CSV cell is quoted
        assert accounts.find_user(conn, rows[0]["key"]).name == "=cmd|' /C calc'!A0"
    engine.dispose()
    (tmp_path / "r2.csv").write_text("name\n+1\n")
    printed = grader("users", "import", str(tmp_path / "r2.csv"), "--db", db)  # no --out: the table on stdout
    assert printed.returncode == 0 and printed.stdout.splitlines()[1].startswith("'+1,student,mg_")


@pytest.mark.parametrize(
    "text, message",
    [
        ("who\nalice\n", "needs a header line with a 'name' column"),
        ("name,role\nalice,admin\n", "roster.csv:2: role 'admin': use one of student, ta, instructor"),
        ("name\nalice\nalice\n", "roster.csv:3: name 'alice' appears twice"),
    ],
)
def test_users_import_rejects_bad_rosters(tmp_path, text, message):
    roster = tmp_path / "roster.csv"
    roster.write_text(text)
    r = grader("users", "import", str(roster), "--db", f"sqlite:///{tmp_path / 'g.db'}")
    assert r.returncode == 1 and message in r.stderr


def test_usage_errors_exit_2(tmp_path):
    r = grader("users", "add", "x", "--role", "admin", "--db", f"sqlite:///{tmp_path / 'g.db'}")
    assert r.returncode == 2 and "invalid choice: 'admin'" in r.stderr
    r = grader("gradebook", "--db", "not a url", "--out", str(tmp_path / "g.csv"))
    assert r.returncode == 2 and "--db 'not a url' is not a database URL" in r.stderr


def test_gradebook_export_is_one_row_per_student(tmp_path):
    db = f"sqlite:///{tmp_path / 'g.db'}"
    for name in ("zoe", "=cmd", "=cmd|' /C calc'!A0", "-1"):
        assert grader("users", "add", name, "--db", db).returncode == 0
    out = tmp_path / "grades.csv"
    out.write_text("stale")
    r = grader("gradebook", "--db", db, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == (
        "name,total,on-time total,late,needs attention\n'-1,0.00,0.00,,\n'=cmd,0.00,0.00,,\n"
        "'=cmd|' /C calc'!A0,0.00,0.00,,\nzoe,0.00,0.00,,\n"
    )
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".grades.csv")]  # no temp left


@pytest.mark.parametrize(
    "args, message",
    [
        (["--port", "0"], "grader serve: --port 0: use 1-65535"),
        (["--rate", "-1"], "grader serve: --rate -1: use a number >= 0 (0 turns the limit off)"),
        (["--ssl-keyfile", "k.pem"], "grader serve: give both --ssl-keyfile and --ssl-certfile, or neither"),
        (["--workers", "0"], "grader serve: --workers 0: use 1-64"),
        (["--quota-mb", "-1"], "grader serve: --quota-mb -1: use a number >= 0 (0: no quota)"),
        (["--header-timeout", "0"], "grader serve: --header-timeout 0: use a positive number"),
        (["--max-conns-per-client", "0"], "grader serve: --max-conns-per-client 0: use at least 1"),
    ],
)
def test_serve_usage_errors_exit_2_before_starting(tmp_path, args, message):
    r = grader("serve", "--db", f"sqlite:///{tmp_path / 'g.db'}", *args)
    assert (r.returncode, r.stderr.strip()) == (2, message)
