"""A deadline names its time zone: one typed without a zone is refused (it used
to be taken as UTC silently) and nothing is published; a publish that sets one
echoes it back as the server stored it, in UTC."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import Server, add_user, sqlite_rows  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    db = tmp_path_factory.mktemp("deadlines") / "grader.db"
    prof = add_user(f"sqlite:///{db}", "prof", "instructor")
    server = Server(db).start()
    yield server, prof, db
    server.stop()


def test_a_deadline_without_a_zone_is_refused_naming_the_fix_and_nothing_is_published(srv):
    server, prof, db = srv
    r = server.post("publish", prof, [1.0], assignment="hw1", problem="forward", deadline="2026-02-01T23:59:00")
    assert r.status_code == 400
    assert r.text.strip() == (
        "query parameter 'deadline' must be ISO 8601 with a time zone, like "
        "2026-02-01T23:59:00+00:00 (UTC) or 2026-02-01T23:59:00-08:00, "
        "got '2026-02-01T23:59:00' (no zone)"
    )
    assert sqlite_rows(db, "select count(*) from publications") == [(0,)]


def test_a_publish_echoes_the_deadline_it_set_in_utc(srv):
    server, prof, db = srv
    r = server.post("publish", prof, [1.0], assignment="hw1", problem="backward", deadline="2026-02-01T23:59:00-08:00")
    assert r.status_code == 200 and r.json()["deadline"] == "2026-02-02T07:59:00+00:00"
    assert sqlite_rows(db, "select deadline from problems where name = 'backward'") == [("2026-02-02 07:59:00.000000",)]
    assert "deadline" not in server.post("publish", prof, [1.0], assignment="hw1", problem="x").json()
