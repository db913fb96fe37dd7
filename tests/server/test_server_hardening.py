"""Deadline-rush defects, each with the test that catches its return, on
SQLite and on PostgreSQL: lateness judged per answer, numbers beyond float
range, NUL and control characters, out-of-range deadlines, the storage
quota, sessions that end at sign-out, login CSRF, keys kept out of logs."""

import json
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, db_rows, enc  # noqa: E402

pytestmark = pytest.mark.server
FUTURE, PAST = "2999-01-01T00:00:00Z", "2020-01-01T00:00:00Z"


@pytest.fixture(scope="module", params=DATABASES)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hardening")
    server = Server(folder / "grader.db", "--access-log", db_url=database_url(request.param, folder))
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


def start(srv, who="alice", assignment="hw1", problem="forward"):
    r = srv.post("submit", srv.keys[who], assignment=assignment, problem=problem)
    assert r.status_code == 200, r.text
    return r.json()


def cell(srv, who, label):
    from grader.server.gradebook import scores as gradebook
    from grader.server.store.db import make_engine

    engine = make_engine(srv.db_url)
    try:
        with engine.connect() as conn:
            book = gradebook.build(conn)
    finally:
        engine.dispose()
    row = next(r for r in book.rows if r.name == who)
    return row.cells[[p.label for p in book.questions].index(label)]


def test_lateness_is_judged_when_each_case_is_answered(srv):
    prof, alice = srv.keys["prof"], srv.keys["alice"]
    assert srv.post("publish", prof, [1.0, 2.0], assignment="hw9", problem="p", deadline=FUTURE).status_code == 200
    sub = start(srv, assignment="hw9", problem="p")
    assert sub["late"] is False  # started on time
    on_time = srv.post("submit_test", alice, 1.0, submission_id=sub["submission_id"], test_case_index=0)
    assert on_time.json() == {"correct": True}
    # Another question's deadline is its own: q's passing leaves p on time.
    assert srv.post("publish", prof, [0.0], assignment="hw9", problem="q", deadline=PAST).status_code == 200
    assert srv.post("submit_test", alice, 1.0, submission_id=sub["submission_id"], test_case_index=0).json() == {
        "correct": True
    }
    # The instructor moves p's own deadline into the past (republishing it with a deadline).
    assert srv.post("publish", prof, [1.0, 2.0], assignment="hw9", problem="p", deadline=PAST).status_code == 200
    late = srv.post("submit_test", alice, 2.0, submission_id=sub["submission_id"], test_case_index=1)
    resent = srv.post("submit_test", alice, 1.0, submission_id=sub["submission_id"], test_case_index=0)
    assert late.json() == {"correct": True, "late": True, "deadline": late.json()["deadline"]}
    assert late.json()["deadline"].startswith(PAST[:10]) and resent.json() == {"correct": True}
    got = cell(srv, "alice", "hw9/p")
    # The gradebook judges each first answer's arrival against the deadline in force now: p's deadline
    # moved before both answers arrived, so both are late (the answers to /submit_test said what held then).
    assert (got.score, got.on_time, got.late) == (1.0, 0.0, True)
    assert db_rows(
        srv.db_url,
        "select test_case_index, late from case_results where submission_id = :s order by test_case_index",
        s=sub["submission_id"],
    ) == [(0, False), (1, True)]


@pytest.mark.parametrize(
    "path, params, body, text",
    [
        ("submit_test", {}, b"1" * 400, "submitted value: a number in the body has 400 digits, beyond the range"),
        ("submit_test", {}, b"[1, -" + b"9" * 400 + b"]", "submitted value: a number in the body has 400 digits"),
        (
            "submit_test",
            {},
            json.dumps({"_encoded_type": "np.ndarray", "data": [10**400]}).encode(),
            "submitted value: np.ndarray 'data' holds object values",
        ),
        ("submit_test", {}, "1.0".encode("utf-16"), "submitted value: body is not valid JSON"),
        ("submit_test", {}, b"1.0\x00", "submitted value: body is not valid JSON"),
        (
            "submit",
            {"assignment": "hw1\x00", "problem": "forward"},
            b"",
            "query parameter 'assignment' holds control characters",
        ),
        (
            "submit",
            {"assignment": "hw1", "problem": "for\x1bward"},
            b"",
            "query parameter 'problem' holds control characters",
        ),
        (
            "publish",
            {"assignment": "a\x00b", "problem": "p"},
            b"[1]",
            "query parameter 'assignment' holds control characters",
        ),
        (
            "publish",
            {"assignment": "a", "problem": "p"},
            b"[1, " + b"7" * 400 + b"]",
            "published values: a number in the body has 400 digits",
        ),
    ],
)
def test_out_of_range_numbers_and_control_characters_get_400(srv, path, params, body, text):
    who = "prof" if path == "publish" else "bob"
    if path == "submit_test":
        params = {"submission_id": start(srv, "bob")["submission_id"], "test_case_index": 0}
    r = srv.post(path, srv.keys[who], body, **params)
    assert r.status_code == 400, r.text
    assert r.text.startswith(text)


def test_escaped_nul_in_a_string_value_is_graded_and_stored(srv):
    sid = start(srv, "bob")["submission_id"]
    r = srv.post("submit_test", srv.keys["bob"], b'"a\\u0000b"', submission_id=sid, test_case_index=0)
    assert r.json() == {"correct": False, "reason": "value: expected a number, got a string"}


@pytest.mark.parametrize(
    "deadline",
    ["0001-01-01", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "1969-12-31T00:00:00Z", "3000-01-01"],
)
def test_deadlines_far_in_the_past_or_future_get_400(srv, deadline):
    r = srv.post("publish", srv.keys["prof"], [1.0], assignment="hw1", problem="odd", deadline=deadline)
    assert r.status_code == 400
    assert r.text.startswith("query parameter 'deadline' must be")


def login(srv, key, **headers):
    return requests.post(srv.url + "login", data={"key": key}, headers=headers, allow_redirects=False, timeout=10)


def test_a_forwarded_host_from_an_undeclared_proxy_does_not_make_a_page_same_origin(srv):
    """No --trusted-proxy here: X-Forwarded-Host is anyone's word (the declared proxy's: test_server_proxies)."""
    r = login(srv, srv.keys["alice"], Origin="https://grader.example.edu", **{"X-Forwarded-Host": "grader.example.edu"})
    assert r.status_code == 403 and "grader_session" not in r.cookies


def test_logout_ends_the_session_on_the_server(srv):
    r = login(srv, srv.keys["alice"], Origin=srv.url.rstrip("/"))
    assert r.status_code == 303
    cookie = {"grader_session": r.cookies["grader_session"]}
    assert requests.get(srv.url + "me", cookies=cookie, allow_redirects=False, timeout=10).status_code == 200
    out = requests.post(
        srv.url + "logout", cookies=cookie, headers={"Origin": srv.url.rstrip("/")}, allow_redirects=False, timeout=10
    )
    assert out.status_code == 303
    # The old cookie, replayed (e.g. copied before sign-out), no longer opens a page.
    again = requests.get(srv.url + "me", cookies=cookie, allow_redirects=False, timeout=10)
    assert (again.status_code, again.headers["location"]) == (303, "/login")


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Referer": "http://evil.example/form"},
        {"Origin": "null"},
    ],
)
def test_cross_site_login_and_logout_are_refused(srv, headers):
    r = login(srv, srv.keys["alice"], **headers)
    assert (r.status_code, "grader_session" in r.cookies) == (403, False)
    assert r.text == "cross-site request refused: sign in and out from this server's own pages\n"
    good = login(srv, srv.keys["alice"], **{"Sec-Fetch-Site": "same-origin"})
    cookie = {"grader_session": good.cookies["grader_session"]}
    out = requests.post(srv.url + "logout", cookies=cookie, headers=headers, allow_redirects=False, timeout=10)
    assert out.status_code == 403
    assert requests.get(srv.url + "me", cookies=cookie, allow_redirects=False, timeout=10).status_code == 200


def test_keys_never_reach_the_access_log(srv):
    key = srv.keys["bob"]
    assert srv.post("submit", key, assignment="hw1", problem="forward").status_code == 200
    requests.get(srv.url + "gradebook.csv", params={"user_key": key}, timeout=10)
    login(srv, key)
    log = srv.log.read_text(errors="replace")
    assert "POST /submit?assignment=hw1&problem=forward&user_key=[redacted] HTTP/1.1" in log  # logged, redacted
    assert key not in log


@pytest.mark.parametrize("kind", DATABASES)
def test_storage_quota_per_key_gives_a_clear_403(kind, tmp_path):
    srv = Server(tmp_path / "grader.db", "--quota-mb", "0.02", db_url=database_url(kind, tmp_path))
    prof, alice = add_user(srv.db_url, "prof", "instructor"), add_user(srv.db_url, "alice")
    srv.start()
    try:
        assert srv.post("publish", prof, [1.0] * 50, assignment="hw1", problem="p").status_code == 200
        sid = srv.post("submit", alice, assignment="hw1", problem="p").json()["submission_id"]
        value = enc(list(range(1000)))  # about 5 KB stored per case
        codes = [srv.post("submit_test", alice, value, submission_id=sid, test_case_index=i) for i in range(8)]
        statuses = [r.status_code for r in codes]
        assert statuses[:3] == [200, 200, 200] and 403 in statuses, statuses
        refused = codes[statuses.index(403)]
        assert refused.text.startswith("storage quota reached: this key has stored its 0.02 MB")
        # Small rows fill the rest, then /submit is refused too.
        starts = [srv.post("submit", alice, assignment="hw1", problem="p").status_code for _ in range(60)]
        assert set(starts) == {200, 403} and starts.index(403) == starts.count(200), starts
        # An answer already stored is still answered (a retry); instructors have no quota.
        assert srv.post("submit_test", alice, value, submission_id=sid, test_case_index=0).status_code == 200
        assert srv.post("publish", prof, [value] * 20, assignment="hw1", problem="big").status_code == 200
        used = dict(
            db_rows(srv.db_url, "select users.name, stored_bytes from usage join users on users.id = usage.user_id")
        )
        assert used["prof"] == 0 and 15_000 < used["alice"] <= 0.02 * 2**20
    finally:
        srv.stop()
