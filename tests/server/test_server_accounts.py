"""Accounts a course can run: `grader users list|reissue-key|revoke|remove` against a
running server (a key ended is refused at once, and so are its sessions), the TA
role (reads, changes nothing), and `users import` syncing a roster."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env, db_rows  # noqa: E402

pytestmark = pytest.mark.server


def grader(*args):
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = Server(tmp_path_factory.mktemp("accounts") / "grader.db")
    server.keys = {
        name: add_user(server.db_url, name, role)
        for name, role in [
            ("prof", "instructor"),
            ("tess", "ta"),
            ("alice", "student"),
            ("bob", "student"),
            ("cy", "student"),
        ]
    }
    server.start()
    assert server.post("publish", server.keys["prof"], [1.0], assignment="hw1", problem="p").status_code == 200
    yield server
    server.stop()


def users(srv, *args):
    return grader("users", *args, "--db", srv.db_url)


def signed_in(srv, key) -> requests.Session:
    s = requests.Session()
    assert s.post(srv.url + "login", data={"key": key}, timeout=10).status_code == 200
    return s


def page(session, srv, path) -> tuple:
    """(status, final path) of a page load, waiting out the page pacing."""
    while True:
        r = session.get(srv.url + path.lstrip("/"), timeout=10)
        if r.status_code != 429:
            return r.status_code, r.url[len(srv.url) - 1 :]
        time.sleep(float(r.headers.get("retry-after", 1)))


def submit(srv, key) -> int:
    return srv.post("submit", key, assignment="hw1", problem="p").status_code


def test_list_shows_every_account_and_never_a_key(srv):
    run = users(srv, "list")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "name,role,email,status,created"
    assert [line.split(",")[:4] for line in lines[1:]] == [
        ["prof", "instructor", "", "active"],
        ["alice", "student", "", "active"],
        ["bob", "student", "", "active"],
        ["cy", "student", "", "active"],
        ["tess", "ta", "", "active"],
    ]
    assert "mg_" not in run.stdout


def test_reissue_key_ends_the_old_key_and_its_sessions_at_once(srv):
    old = srv.keys["alice"]
    browser = signed_in(srv, old)
    assert page(browser, srv, "/me") == (200, "/me") and submit(srv, old) == 200
    run = users(srv, "reissue-key", "ALICE")  # any case
    assert run.returncode == 0, run.stderr
    message, new = run.stdout.splitlines()
    assert message == "new key for alice; the old key and its sessions no longer work; their key (shown only once):"
    assert submit(srv, old) == 401 and submit(srv, new) == 200  # the moment the command returns
    assert page(browser, srv, "/me") == (200, "/login")  # signed out
    srv.keys["alice"] = new


def test_revoke_ends_a_key_until_one_is_reissued(srv):
    key = srv.keys["bob"]
    browser = signed_in(srv, key)
    assert submit(srv, key) == 200
    run = users(srv, "revoke", "bob")
    assert run.returncode == 0 and run.stdout.startswith("revoked the key of bob: it and its sessions no longer work")
    assert submit(srv, key) == 401 and page(browser, srv, "/me") == (200, "/login")
    assert "bob,student,,revoked," in users(srv, "list").stdout
    new = users(srv, "reissue-key", "bob").stdout.splitlines()[-1]
    assert submit(srv, new) == 200 and "bob,student,,active," in users(srv, "list").stdout


def test_remove_keeps_history_and_never_frees_the_name(srv, tmp_path):
    key = srv.keys["cy"]
    assert submit(srv, key) == 200
    before = db_rows(
        srv.db_url, "select count(*) from submissions where user_id = (select id from users where name = 'cy')"
    )
    run = users(srv, "remove", "cy")
    assert run.returncode == 0 and run.stdout == "removed cy: signed out, history kept, the name stays taken\n"
    assert submit(srv, key) == 401
    assert (
        db_rows(srv.db_url, "select count(*) from submissions where user_id = (select id from users where name = 'cy')")
        == before
        != [(0,)]
    )
    again = users(srv, "add", "Cy")
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr == (
        "grader users: name 'Cy' is already account 'cy' (removed: its name is never reused) "
        "(ignoring case and Unicode form); pick another, or leave that person's account as it is\n"
    )
    for action in ("reissue-key", "revoke", "remove"):
        refused = users(srv, action, "cy")
        assert refused.returncode == 1 and "was removed" in refused.stderr and refused.stderr.count("\n") == 1
    assert "cy,student,,removed," in users(srv, "list").stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["revoke", "nobody"], "grader users: no account named 'nobody'; `grader users list` shows every account\n"),
        (
            ["revoke", "bo\u200bb"],
            "grader users: name 'bo\\u200bb' holds the invisible character U+200B ZERO WIDTH "
            "SPACE; type the name as `grader users list` shows it\n",
        ),
    ],
)
def test_a_bad_name_is_one_line(srv, args, message):
    run = users(srv, *args)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", message)


def test_a_ta_reads_the_gradebook_and_student_pages_and_changes_nothing(srv):
    key = srv.keys["tess"]
    browser = signed_in(srv, key)
    assert page(browser, srv, "/") == (200, "/gradebook")
    assert page(browser, srv, "/gradebook/student?name=alice") == (200, "/gradebook/student?name=alice")
    assert requests.get(srv.url + "gradebook.csv", params={"user_key": key}, timeout=10).status_code == 200
    r = srv.post("publish", key, [2.0], assignment="hw1", problem="p")
    assert (r.status_code, r.text) == (403, "only instructors can publish; 'tess' is a ta\n")
    r = srv.post("publish_notes", key, b"[]", publication_id=1)
    assert r.status_code == 403
    csv_text = requests.get(srv.url + "gradebook.csv", params={"user_key": srv.keys["prof"]}, timeout=10).text
    assert "tess" not in csv_text  # staff are not in the class's rows


# --- roster sync -----------------------------------------------------------------


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'g.db'}"
    for name, role, email in (
        ("prof", "instructor", "p@uni.edu"),
        ("alice", "student", "a@uni.edu"),
        ("bob", "student", None),
        ("carol", "student", None),
    ):
        assert (
            grader("users", "add", name, "--role", role, *(["--email", email] if email else []), "--db", url).returncode
            == 0
        )
    return url


def accounts(db):
    return db_rows(db, "select name, role, email, status from users order by id")


def test_a_roster_syncs_adds_updates_and_lists_the_missing_without_removing(db, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "name,role,email\nAlice,student,alice@uni.edu\nbob,,\ndan,,dan@uni.edu\nTess,ta,\nprof,instructor,\n"
    )
    before = accounts(db)
    dry = grader("users", "import", str(roster), "--db", db, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    changes = [
        f"{roster}: 2 new, 1 changed, 2 unchanged, 1 not on the roster",
        "  + dan (student, dan@uni.edu)",
        "  + Tess (ta)",
        "  ~ alice: email a@uni.edu -> alice@uni.edu",
        "  ? carol: not on the roster; kept (`grader users remove NAME` removes an account)",
    ]
    assert dry.stdout.splitlines() == changes + [
        "dry run: nothing changed; run the same command without --dry-run to apply it"
    ]
    assert accounts(db) == before
    keys = tmp_path / "keys.csv"
    real = grader("users", "import", str(roster), "--db", db, "--out", str(keys))
    assert real.returncode == 0, real.stderr
    assert real.stdout.splitlines() == changes + [f"added 2 users; keys in {keys}"]
    assert [line.split(",")[:2] for line in keys.read_text().splitlines()] == [
        ["name", "role"],
        ["dan", "student"],
        ["Tess", "ta"],
    ]
    assert accounts(db) == [
        ("prof", "instructor", "p@uni.edu", "active"),
        ("alice", "student", "alice@uni.edu", "active"),
        ("bob", "student", None, "active"),
        ("carol", "student", None, "active"),
        ("dan", "student", "dan@uni.edu", "active"),
        ("Tess", "ta", None, "active"),
    ]
    again = grader("users", "import", str(roster), "--db", db)  # nothing left to do
    assert again.returncode == 0 and again.stdout == "name,role,key\n"
    assert again.stderr.splitlines()[0] == f"{roster}: 0 new, 0 changed, 5 unchanged, 1 not on the roster"


def test_every_roster_error_is_reported_in_one_run_and_nothing_applied(db, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name,role,email\nalice,admin,\nzed,,not-an-address\nbob,,a@uni.edu\nZed\u200b,,\neve,,\nEVE,,\n")
    before = accounts(db)
    run = grader("users", "import", str(roster), "--db", db)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.splitlines() == [
        f"grader users: {roster}:2: role 'admin': use one of student, ta, instructor",
        f"grader users: {roster}:3: email 'not-an-address': give an address like ada@example.org (or leave it empty)",
        f"grader users: {roster}:5: name 'Zed\\u200b' holds the invisible character U+200B ZERO WIDTH SPACE; "
        "retype it without that character",
        f"grader users: {roster}:7: name 'EVE' appears twice (first on line 6, ignoring case and Unicode form); "
        "keep one line per person",
    ]
    assert accounts(db) == before
    roster.write_text("name,email\nbob,a@uni.edu\n")  # the file is fine; the database says no
    run = grader("users", "import", str(roster), "--db", db)
    assert run.returncode == 1 and run.stderr == (
        f"grader users: {roster}:2: email 'a@uni.edu' is already 'alice''s; give each person their own e-mail\n"
    )
    assert accounts(db) == before
