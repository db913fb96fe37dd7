"""Why a case is wrong is judged once, when it is answered, and stored: /me and
the instructor's page for a student read it and never re-grade. Cases answered
before reasons were stored get theirs judged once, on the first page showing them."""

import sys
from pathlib import Path

import numpy as np
import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, db_rows, enc  # noqa: E402

from grader.server.store.db import make_engine  # noqa: E402

pytestmark = pytest.mark.server
SHAPE_REASON = "value: expected shape (3,), got (2,)"


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "grader.db")
    server.keys = {"prof": add_user(server.db_url, "prof", "instructor"), "ann": add_user(server.db_url, "ann")}
    server.start()
    assert (
        server.post("publish", server.keys["prof"], [enc(np.ones(3)), 2.0], assignment="hw1", problem="p").status_code
        == 200
    )
    sid = server.post("submit", server.keys["ann"], assignment="hw1", problem="p").json()["submission_id"]
    wrong = server.post("submit_test", server.keys["ann"], enc(np.ones(2)), submission_id=sid, test_case_index=0)
    assert wrong.json()["correct"] is False
    assert server.post("submit_test", server.keys["ann"], 2.0, submission_id=sid, test_case_index=1).json() == {
        "correct": True
    }
    yield server
    server.stop()


def page(srv, who: str, path: str) -> str:
    with requests.Session() as s:
        assert s.post(srv.url + "login", data={"key": srv.keys[who]}, timeout=10).status_code == 200
        r = s.get(srv.url + path, timeout=10)
        assert r.status_code == 200
        return r.text


def set_reason(srv, value):
    engine = make_engine(srv.db_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("update case_results set reason = ? where test_case_index = 0", (value,))
    finally:
        engine.dispose()


def test_the_reason_is_stored_when_the_case_is_answered(srv):
    assert sorted(db_rows(srv.db_url, "select test_case_index, reason from case_results")) == [
        (0, SHAPE_REASON),
        (1, ""),
    ]
    assert SHAPE_REASON in page(srv, "ann", "me")


@pytest.mark.parametrize("who, path", [("ann", "me"), ("prof", "gradebook/student?name=ann")])
def test_pages_show_the_stored_reason_without_regrading(srv, who, path):
    set_reason(srv, "stored reason, not recomputed")  # what a re-grade would replace
    shown = page(srv, who, path)
    assert "stored reason, not recomputed" in shown and SHAPE_REASON not in shown


def test_a_case_answered_before_reasons_were_stored_is_judged_once(srv):
    set_reason(srv, None)  # as migration 0006 leaves an old row
    assert SHAPE_REASON in page(srv, "ann", "me")
    assert db_rows(srv.db_url, "select reason from case_results where test_case_index = 0") == [(SHAPE_REASON,)]
    set_reason(srv, "judged once")
    assert "judged once" in page(srv, "prof", "gradebook/student?name=ann")


def test_migration_0006_leaves_old_reasons_to_judge_and_indexes_sessions(tmp_path):
    from sqlalchemy import create_engine, text

    from grader.server.store import migrate

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    migrate.upgrade(engine, "0005")
    with engine.begin() as conn:
        for sql in (
            "insert into users (id, name, role, key_hash, created_at) values (1, 'ann', 'student', 'h', "
            "'2026-01-01 00:00:00')",
            "insert into assignments (id, name) values (1, 'hw1')",
            "insert into problems (id, assignment_id, name, weight) values (1, 1, 'p', 1.0)",
            "insert into publications (id, problem_id, published_by, created_at, rtol, atol, num_cases, "
            "values_json) values (1, 1, 1, '2026-01-01 00:00:00', 0, 0, 1, '[1]')",
            "insert into submissions (id, user_id, problem_id, publication_id, created_at, late) "
            "values (1, 1, 1, 1, '2026-01-01 00:00:00', false)",
            "insert into case_results (submission_id, test_case_index, correct, value_sha256, value_json, "
            "created_at, late) values (1, 0, false, 'x', '2', '2026-01-01 00:00:00', false)",
        ):
            conn.execute(text(sql))
    migrate.upgrade(engine)
    engine.dispose()
    assert db_rows(url, "select reason from case_results") == [(None,)]
    indexes = db_rows(
        url, "select name from sqlite_master where type = 'index' and tbl_name = 'sessions' and name like 'ix_%'"
    )
    assert sorted(indexes) == [("ix_sessions_expires_at",), ("ix_sessions_user_id_expires_at",)]
    from grader.server.gradebook import details

    engine = make_engine(url)
    with engine.connect() as conn:
        assert details.unstored_reasons(conn, "ann") == [(1, "value: wrong number (tolerance rtol=0, atol=0)")]
    engine.dispose()


def test_page_loads_are_paced_per_session(srv):
    from grader.server.config import ServerConfig

    burst = ServerConfig().pages_burst
    with requests.Session() as s:
        assert (
            s.post(srv.url + "login", data={"key": srv.keys["ann"]}, allow_redirects=False, timeout=10).status_code
            == 303
        )
        statuses = [s.get(srv.url + "me", timeout=10).status_code for _ in range(burst + 5)]
    assert statuses[:burst] == [200] * burst and 429 in statuses[burst:]  # a token comes back every 0.5 s
    assert "case 0" in page(srv, "prof", "gradebook/student?name=ann")  # another session is not held up
