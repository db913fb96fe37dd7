"""The mugrade wire protocol against a real server: publish, submit, grade, score."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, db_rows, enc  # noqa: E402

from grader.shipped.tolerance import ATOL, RTOL  # noqa: E402

pytestmark = pytest.mark.server

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
CASES = [enc(A), 3.25, [enc(np.array([1, 2])), {"loss": 0.5}], True]


@pytest.fixture(scope="module", params=DATABASES)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("protocol")
    server = Server(folder / "grader.db", db_url=database_url(request.param, folder))
    keys = {
        name: add_user(server.db_url, name, role)
        for name, role in [("prof", "instructor"), ("alice", "student"), ("bob", "student"), ("carol", "student")]
    }
    server.start()
    server.keys = keys
    r = server.post("publish", keys["prof"], CASES, assignment="hw1", problem="forward")
    assert r.status_code == 200, r.text
    yield server
    server.stop()


def run_submission(srv, who, answers, problem="forward"):
    r = srv.post("submit", srv.keys[who], assignment="hw1", problem=problem)
    assert r.status_code == 200, r.text
    sid = r.json()["submission_id"]
    verdicts = []
    for i, value in enumerate(answers):
        r = srv.post("submit_test", srv.keys[who], value, submission_id=sid, test_case_index=i)
        assert r.status_code == 200, r.text
        verdicts.append(r.json()["correct"])
    return sid, verdicts


def test_all_correct_values_pass(srv):
    _, verdicts = run_submission(srv, "alice", CASES)
    assert verdicts == [True, True, True, True]


def test_wrong_values_fail_exactly_their_cases(srv):
    wrong = [enc(A + 1e-3), 3.25, [enc(np.array([1, 2])), {"loss": 0.6}], True]
    _, verdicts = run_submission(srv, "bob", wrong)
    assert verdicts == [False, True, False, True]


@pytest.mark.parametrize(
    "value, reason",
    [
        (enc(A.T), "value: expected shape (2, 3), got (3, 2)"),
        (A.tolist(), "value: expected an np.ndarray, got a list"),
        (enc(A * (1 + 2e-5) + 2e-5), f"value: values differ beyond tolerance (rtol={RTOL:g}, atol={ATOL:g})"),
    ],
)
def test_wrong_structure_is_incorrect_with_reason(srv, value, reason):
    sid = srv.post("submit", srv.keys["carol"], assignment="hw1", problem="forward").json()["submission_id"]
    r = srv.post("submit_test", srv.keys["carol"], value, submission_id=sid, test_case_index=0)
    assert r.status_code == 200 and r.json() == {"correct": False, "reason": reason}


def test_values_within_tolerance_pass(srv):
    sid = srv.post("submit", srv.keys["carol"], assignment="hw1", problem="forward").json()["submission_id"]
    close = enc(A.astype(np.float64) * (1 + 1e-7))
    assert srv.post("submit_test", srv.keys["carol"], close, submission_id=sid, test_case_index=0).json() == {
        "correct": True
    }


def test_retry_of_same_value_is_idempotent_and_changing_it_conflicts(srv):
    key = srv.keys["carol"]
    sid = srv.post("submit", key, assignment="hw1", problem="forward").json()["submission_id"]
    first = srv.post("submit_test", key, 3.25, submission_id=sid, test_case_index=1)
    again = srv.post("submit_test", key, 3.25, submission_id=sid, test_case_index=1)
    other = srv.post("submit_test", key, 3.0, submission_id=sid, test_case_index=1)
    assert first.json() == again.json() == {"correct": True}
    assert other.status_code == 409
    assert other.text.startswith(f"test case 1 of submission {sid} was already answered with another value")
    rows = db_rows(srv.db_url, "select count(*) from case_results where submission_id = :sid", sid=sid)
    assert rows == [(1,)]


def test_index_out_of_range_and_unpublished_problem(srv):
    key = srv.keys["carol"]
    sid = srv.post("submit", key, assignment="hw1", problem="forward").json()["submission_id"]
    r = srv.post("submit_test", key, 1.0, submission_id=sid, test_case_index=4)
    assert (r.status_code, r.text) == (400, "test_case_index 4 is out of range: this problem has 4 cases (0..3)\n")
    r = srv.post("submit", key, assignment="hw1", problem="nope")
    assert r.status_code == 404 and "problem 'nope' of assignment 'hw1' has no published answers" in r.text


def test_per_problem_tolerance_is_stored_at_publish(srv):
    prof = srv.keys["prof"]
    assert srv.post("publish", prof, [1.0], assignment="hw1", problem="loose", rtol="0.01").status_code == 200
    _, verdicts = run_submission(srv, "carol", [1.005], problem="loose")
    assert verdicts == [True]
    _, verdicts = run_submission(srv, "carol", [1.05], problem="loose")
    assert verdicts == [False]


def test_a_publication_without_tolerance_compares_within_the_cases_own(srv):
    """The cases' default (grader/shipped/tolerance.py): an answer within the server's former atol 1e-5 but not
    within the cases' atol is wrong; one within it is right, for numbers and arrays alike."""
    assert (RTOL, ATOL) == (1e-5, 1e-6)
    prof = srv.keys["prof"]
    zeros = [0.0, enc(np.zeros(3))]
    assert srv.post("publish", prof, zeros, assignment="hw1", problem="default_tol").status_code == 200
    _, verdicts = run_submission(srv, "carol", [5e-6, enc(np.full(3, 5e-6))], problem="default_tol")
    assert verdicts == [False, False]
    _, verdicts = run_submission(srv, "carol", [5e-7, enc(np.full(3, 5e-7))], problem="default_tol")
    assert verdicts == [True, True]


def test_republish_grades_new_submissions_against_new_answers(srv):
    prof = srv.keys["prof"]
    srv.post("publish", prof, [10.0], assignment="hw1", problem="repub")
    sid_old = srv.post("submit", srv.keys["carol"], assignment="hw1", problem="repub").json()["submission_id"]
    srv.post("publish", prof, [20.0], assignment="hw1", problem="repub")
    # The old submission keeps its publication; a new one sees the new answer.
    r = srv.post("submit_test", srv.keys["carol"], 10.0, submission_id=sid_old, test_case_index=0)
    assert r.json() == {"correct": True}
    assert run_submission(srv, "carol", [10.0], problem="repub")[1] == [False]


def test_late_submissions_are_accepted_and_flagged(srv):
    prof = srv.keys["prof"]
    r = srv.post("publish", prof, [1.0], assignment="hw0", problem="done", deadline="2020-01-01T00:00:00Z")
    assert r.status_code == 200
    r = srv.post("submit", srv.keys["alice"], assignment="hw0", problem="done")
    assert r.status_code == 200 and r.json()["late"] is True
    r2 = srv.post("submit", srv.keys["alice"], assignment="hw1", problem="forward")
    assert r2.json()["late"] is False
    assert srv.post(
        "submit_test", srv.keys["alice"], 1.0, submission_id=r.json()["submission_id"], test_case_index=0
    ).json() == {"correct": True, "late": True, "deadline": r.json()["deadline"]}
    import requests

    grades = requests.get(srv.url + "gradebook.csv", params={"user_key": prof}, timeout=10).text.splitlines()
    header, alice = grades[0].split(","), next(g for g in grades if g.startswith("alice,")).split(",")
    assert alice[header.index("hw0/done")] == "100.00" and alice[header.index("late")] == "hw0/done"  # flagged late


def test_deadlines_are_per_question(srv):
    """`publish -k a --deadline` sets a's deadline only: b (due later) is on time, a is late;
    republishing a without --deadline keeps its deadline. The on-time total leaves a out."""
    import requests

    prof, past, later = srv.keys["prof"], "2020-01-01T00:00:00Z", "2999-01-01T00:00:00+00:00"
    assert srv.post("publish", prof, [1.0], assignment="hw9", problem="a", weight="3", deadline=past).status_code == 200
    assert (
        srv.post("publish", prof, [2.0], assignment="hw9", problem="b", weight="1", deadline=later).status_code == 200
    )
    assert srv.post("publish", prof, [1.0], assignment="hw9", problem="a").status_code == 200  # keeps its deadline
    srv.keys["dora"] = add_user(srv.db_url, "dora", "student")  # submits only hw9
    a = srv.post("submit", srv.keys["dora"], assignment="hw9", problem="a").json()
    b = srv.post("submit", srv.keys["dora"], assignment="hw9", problem="b").json()
    assert (a["late"], a["deadline"]) == (True, "2020-01-01T00:00:00+00:00")
    assert (b["late"], b["deadline"]) == (False, "2999-01-01T00:00:00+00:00")
    # a case answered late says so, with its question's deadline; mugrade's own key stays
    assert srv.post(
        "submit_test", srv.keys["dora"], 1.0, submission_id=a["submission_id"], test_case_index=0
    ).json() == {"correct": True, "late": True, "deadline": a["deadline"]}
    assert srv.post(
        "submit_test", srv.keys["dora"], 2.0, submission_id=b["submission_id"], test_case_index=0
    ).json() == {"correct": True}
    grades = requests.get(srv.url + "gradebook.csv", params={"user_key": prof}, timeout=10).text.splitlines()
    header, dora = grades[0].split(","), next(g for g in grades if g.startswith("dora,")).split(",")
    assert dora[header.index("hw9/a")] == dora[header.index("hw9/b")] == "100.00"
    assert dora[header.index("late")] == "hw9/a"
    # a's 3 points came late, b's 1 point on time
    total, on_time = float(dora[header.index("total")]), float(dora[header.index("on-time total")])
    assert on_time == pytest.approx(total / 4, abs=0.01) and on_time > 0


def test_best_submission_counts_in_gradebook(srv):
    prof = srv.keys["prof"]
    srv.post("publish", prof, [1.0, 2.0], assignment="hw1", problem="best")
    run_submission(srv, "bob", [1.0, 2.0], problem="best")  # 2/2
    run_submission(srv, "bob", [1.0, 0.0], problem="best")  # 1/2 later: the best stays
    run_submission(srv, "alice", [0.0, 2.0], problem="best")
    import requests

    csv_text = requests.get(srv.url + "gradebook.csv", headers={"Authorization": f"Bearer {prof}"}, timeout=10).text
    lines = {line.split(",")[0]: line.split(",") for line in csv_text.splitlines()}
    col = lines["name"].index("hw1/best")
    assert lines["bob"][col] == "100.00" and lines["alice"][col] == "50.00"
    assert "prof" not in lines  # instructors are not graded


def test_gradebook_csv_shows_a_formula_name_as_text(srv):
    """A student named like a spreadsheet formula submits; the instructor's CSV quotes the
    name and leaves the scores as numbers."""
    import csv

    import requests

    name = "=cmd|' /C calc'!A0"
    srv.keys[name] = add_user(srv.db_url, name, "student")
    prof = srv.keys["prof"]
    srv.post("publish", prof, [1.0, 2.0], assignment="hw1", problem="formula")
    run_submission(srv, name, [1.0, 0.0], problem="formula")
    r = requests.get(srv.url + "gradebook.csv", params={"user_key": prof, "full": "1"}, timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(r.text.splitlines()))
    names = [row[0] for row in rows[1:]]
    assert "'" + name in names and name not in names
    row = rows[names.index("'" + name) + 1]
    assert row[rows[0].index("hw1/formula")] == "50.00"
    assert not [c for row in rows for c in row if c[:1] in ("=", "+", "-", "@", "\t", "\r")]


def test_openapi_document_lists_the_protocol(srv):
    import requests

    paths = requests.get(srv.url + "openapi.json", timeout=10).json()["paths"]
    assert {"/submit", "/submit_test", "/publish"} <= set(paths)
    assert {p["name"] for p in paths["/submit_test"]["post"]["parameters"]} == {
        "user_key",
        "submission_id",
        "test_case_index",
    }
