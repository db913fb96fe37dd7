"""Keys and roles: who may call what, and the exact one-line refusals."""

import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, db_rows  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture(scope="module", params=DATABASES)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("auth")
    server = Server(folder / "grader.db", db_url=database_url(request.param, folder))
    server.keys = {
        name: add_user(server.db_url, name, role)
        for name, role in [("prof", "instructor"), ("alice", "student"), ("bob", "student")]
    }
    server.start()
    assert (
        server.post("publish", server.keys["prof"], [1.0, 2.0], assignment="hw1", problem="forward").status_code == 200
    )
    yield server
    server.stop()


MISSING = "missing key: pass ?user_key=KEY or an 'Authorization: Bearer KEY' header\n"
UNKNOWN = "unknown key: check the key your instructor gave you\n"


@pytest.mark.parametrize(
    "who, status, text",
    [
        (None, 401, MISSING),
        ("mg_not-a-real-key", 401, UNKNOWN),
        ("alice", 403, "only instructors can publish; 'alice' is a student\n"),
        ("prof", 200, None),
    ],
)
def test_publish_role_matrix(srv, who, status, text):
    key = srv.keys.get(who, who)
    r = srv.post("publish", key, [3.0], assignment="hw1", problem="matrix")
    assert r.status_code == status
    if text:
        assert r.text == text


@pytest.mark.parametrize("who, status", [(None, 401), ("mg_bogus", 401), ("alice", 200), ("prof", 200)])
def test_submit_role_matrix(srv, who, status):
    r = srv.post("submit", srv.keys.get(who, who), assignment="hw1", problem="forward")
    assert r.status_code == status


@pytest.mark.parametrize("who, status", [(None, 401), ("alice", 403), ("prof", 200)])
def test_gradebook_csv_role_matrix(srv, who, status):
    headers = {"Authorization": f"Bearer {srv.keys[who]}"} if who else {}
    r = requests.get(srv.url + "gradebook.csv", headers=headers, timeout=10)
    assert r.status_code == status
    if status == 403:
        assert r.text == "only instructors and TAs can read the gradebook; students see their results at /me\n"


def test_bearer_header_is_accepted_instead_of_query_key(srv):
    r = srv.post("submit", bearer=srv.keys["alice"], assignment="hw1", problem="forward")
    assert r.status_code == 200
    sid = r.json()["submission_id"]
    r = srv.post("submit_test", bearer=srv.keys["alice"], body=b"1.0", submission_id=sid, test_case_index=0)
    assert r.json() == {"correct": True}


def test_student_cannot_answer_anothers_submission(srv):
    sid = srv.post("submit", srv.keys["alice"], assignment="hw1", problem="forward").json()["submission_id"]
    r = srv.post("submit_test", srv.keys["bob"], b"1.0", submission_id=sid, test_case_index=0)
    assert (r.status_code, r.text) == (403, f"submission {sid} belongs to another user; start your own with /submit\n")


def test_unknown_submission_is_404(srv):
    r = srv.post("submit_test", srv.keys["bob"], b"1.0", submission_id=999999, test_case_index=0)
    assert (r.status_code, r.text) == (404, "no submission 999999: start one with /submit first\n")


def test_keys_are_stored_hashed(srv):
    tables = ("users", "settings", "sessions", "submissions", "case_results", "publications")
    dump = "\n".join(repr(row) for t in tables for row in db_rows(srv.db_url, f"select * from {t}"))
    assert srv.keys["alice"] not in dump and srv.keys["prof"] not in dump
    from grader.server.accounts.users import hash_key

    assert hash_key(srv.keys["alice"]) in dump
