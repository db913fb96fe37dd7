"""The database under the server: files that vanish or turn read-only are
noticed (503, and a line in the log), and Alembic migrates old databases."""

import os
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, Server, add_user, database_url, db_rows  # noqa: E402

from grader.server.store import migrate  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture
def srv(tmp_path):
    server = Server(tmp_path / "grader.db")
    server.keys = {"prof": add_user(server.db_url, "prof", "instructor"), "alice": add_user(server.db_url, "alice")}
    server.start()
    assert server.post("publish", server.keys["prof"], [1.0], assignment="hw1", problem="p").status_code == 200
    yield server
    server.stop()


def submit(srv):
    return srv.post("submit", srv.keys["alice"], assignment="hw1", problem="p")


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda db: [Path(f"{db}{s}").unlink(missing_ok=True) for s in ("", "-wal", "-shm")], "was deleted"),
        (lambda db: db.unlink(), "was deleted"),
        (lambda db: os.chmod(db, 0o444), "is read-only"),
    ],
)
def test_lost_database_refuses_writes_with_503_and_says_so(srv, damage, problem):
    assert submit(srv).status_code == 200
    damage(srv.db_path)
    answers = [submit(srv) for _ in range(5)]
    assert [r.status_code for r in answers] == [503] * 5  # not one more write acknowledged
    assert answers[0].text.startswith(f"database unavailable: database file {srv.db_path} {problem}")
    sid = 1
    assert srv.post("submit_test", srv.keys["alice"], 1.0, submission_id=sid, test_case_index=0).status_code == 503
    assert f"refusing writes: database file {srv.db_path} {problem}" in srv.log.read_text()


def old_database(url: str):
    """A database at the baseline revision holding one late submission with an answered case."""
    engine = create_engine(url)
    migrate.upgrade(engine, migrate.BASELINE)
    with engine.begin() as conn:
        for sql in (
            "insert into users (id, name, role, key_hash, created_at) values "
            "(1, 'ann', 'student', 'h', '2026-01-01 00:00:00')",
            "insert into assignments (id, name) values (1, 'hw1')",
            "insert into problems (id, assignment_id, name, weight) values (1, 1, 'p', 1.0)",
            "insert into publications (id, problem_id, published_by, created_at, rtol, atol, num_cases, "
            "values_json) values (1, 1, 1, '2026-01-01 00:00:00', 0, 0, 1, '[1]')",
            "insert into submissions (id, user_id, problem_id, publication_id, created_at, late) "
            "values (1, 1, 1, 1, '2026-01-01 00:00:00', true)",
            "insert into case_results (submission_id, test_case_index, correct, value_sha256, created_at) "
            "values (1, 0, true, 'x', '2026-01-01 00:00:00')",
        ):
            conn.execute(text(sql))
    return engine


@pytest.mark.parametrize("kind", DATABASES)
def test_migrations_keep_old_data_and_reach_the_head(kind, tmp_path):
    url = database_url(kind, tmp_path)
    engine = old_database(url)
    assert migrate.current(engine) == migrate.BASELINE
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.head() != migrate.BASELINE
    engine.dispose()
    # A case answered before lateness was kept per case inherits its submission's flag.
    assert db_rows(url, "select submission_id, late from case_results") == [(1, True)]
    assert db_rows(url, "select count(*) from sessions") == [(0,)]


def test_a_database_made_before_migrations_is_stamped_then_upgraded(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old_database(url).dispose()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("drop table alembic_version"))  # as made by create_all, before Alembic
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.head()
    engine.dispose()
    assert db_rows(url, "select name from users") == [("ann",)]


@pytest.mark.parametrize("kind", DATABASES)
def test_each_question_keeps_its_assignments_deadline_through_0005_and_back(kind, tmp_path):
    """0005 moves the deadline from the assignment to each of its questions (so no verdict
    changes), and its downgrade puts the last of them back on the assignment."""
    url = database_url(kind, tmp_path)
    engine = create_engine(url)
    migrate.upgrade(engine, "0004")
    with engine.begin() as conn:
        for sql in (
            "insert into assignments (id, name, deadline) values (1, 'hw1', '2026-02-01 23:59:00')",
            "insert into assignments (id, name) values (2, 'hw2')",
            "insert into problems (id, assignment_id, name, weight) values (1, 1, 'forward', 10)",
            "insert into problems (id, assignment_id, name, weight) values (2, 1, 'backward', 25)",
            "insert into problems (id, assignment_id, name, weight) values (3, 2, 'x', 1)",
        ):
            conn.execute(text(sql))
    migrate.upgrade(engine, "0005")
    rows = db_rows(url, "select name, deadline from problems order by id")
    assert [(n, str(d)[:16] if d else None) for n, d in rows] == [
        ("forward", "2026-02-01 23:59"),
        ("backward", "2026-02-01 23:59"),
        ("x", None),
    ]
    with engine.begin() as conn:
        conn.execute(text("update problems set deadline = '2026-03-01 12:00:00' where id = 2"))
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.head()
    from alembic import command

    cfg = migrate.alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0004")
    engine.dispose()
    rows = db_rows(url, "select name, deadline from assignments order by id")
    assert [(n, str(d)[:16] if d else None) for n, d in rows] == [("hw1", "2026-03-01 12:00"), ("hw2", None)]
