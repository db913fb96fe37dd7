"""Upgrades finish or change nothing: a database full of data at each earlier
revision reaches the newest one with the server's own engine (foreign keys
on), every row kept or derived as its migration says; a failed upgrade leaves
the database at its old revision and says so in one line."""

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, Table, insert, inspect, select, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "server"))
from server_harness import DATABASES, REPO, child_env, database_url, db_rows  # noqa: E402

from grader.server.store import migrate  # noqa: E402
from grader.server.store.db import engine_for, metadata  # noqa: E402

pytestmark = pytest.mark.server


def _earlier_revisions() -> list:
    """Every revision before the head, oldest first."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(migrate.alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions())) if r.revision != migrate.head()]


REVISIONS = _earlier_revisions()


def t(day, hour=0):
    return dt.datetime(2026, 1, day, hour, 0, 0)


# Every column any revision had; each revision gets the ones it has. Parents before children.
ROWS = {
    "users": [
        dict(id=1, name="prof", role="instructor", key_hash="h1", created_at=t(1), email="prof@x.org"),
        dict(id=2, name="ann", role="student", key_hash="h2", created_at=t(1), email="ann@x.org"),
        dict(id=3, name="bob", role="student", key_hash="h3", created_at=t(2), email=None),
    ],
    "settings": [dict(name="secret", value="s3cr3t")],
    "assignments": [dict(id=1, name="hw1", deadline=t(20, 23)), dict(id=2, name="hw2", deadline=None)],
    "problems": [
        dict(id=1, assignment_id=1, name="forward", weight=10.0, deadline=t(21)),
        dict(id=2, assignment_id=1, name="backward", weight=25.0, deadline=t(22)),
        dict(id=3, assignment_id=2, name="x", weight=1.0, deadline=None),
    ],
    "publications": [
        dict(
            id=i, problem_id=i, published_by=1, created_at=t(3), rtol=1e-5, atol=1e-8, num_cases=2, values_json="[1, 2]"
        )
        for i in (1, 2, 3)
    ],
    "submissions": [
        dict(id=1, user_id=2, problem_id=1, publication_id=1, created_at=t(10), late=False),
        dict(id=2, user_id=3, problem_id=2, publication_id=2, created_at=t(25), late=True),
    ],
    "case_results": [
        dict(
            id=1,
            submission_id=1,
            test_case_index=0,
            correct=True,
            value_sha256="a" * 64,
            value_json="1",
            created_at=t(10),
            late=True,
            reason="",
        ),
        dict(
            id=2,
            submission_id=2,
            test_case_index=0,
            correct=False,
            value_sha256="b" * 64,
            value_json=None,
            created_at=t(25),
            late=True,
            reason="wrong shape",
        ),
        dict(
            id=3,
            submission_id=2,
            test_case_index=1,
            correct=True,
            value_sha256="c" * 64,
            value_json="2",
            created_at=t(25),
            late=False,
            reason="",
        ),
    ],
    "sessions": [dict(token_hash="s" * 64, user_id=2, expires_at=t(30))],
    "rate_buckets": [dict(user_id=2, tokens=3.5, updated=1.7e9)],
    "usage": [dict(user_id=1, stored_bytes=0), dict(user_id=2, stored_bytes=120), dict(user_id=3, stored_bytes=7)],
    "case_notes": [dict(id=1, publication_id=1, test_case_index=0, name="c0", description="first case")],
    "batch_results": [
        dict(
            id=1,
            source="out",
            name="ann",
            assignment="hw1",
            digest="d" * 64,
            graded_at=t(5),
            imported_at=t(6),
            score=35.0,
            output="ok",
            batch="run:1",
        ),
        dict(
            id=2,
            source="out2",
            name="ann",
            assignment="hw1",
            digest="f" * 64,
            graded_at=t(5),
            imported_at=t(6),
            score=20.0,
            output="",
            batch="run:2",
        ),
    ],
    "batch_questions": [dict(id=1, result_id=1, question="forward", score=10.0, max_score=10.0)],
    "batch_cases": [
        dict(
            id=1,
            result_id=1,
            position=0,
            question="forward",
            name="case a",
            number="1.1",
            score=10.0,
            max_score=10.0,
            passed=True,
            hidden=False,
            output="",
        )
    ],
    # 0010: the time policy's tables (filled only when populating at the head's own revision)
    "extensions": [
        dict(
            id=1,
            user_id=2,
            assignment="hw1",
            question="forward",
            deadline=t(23),
            extra_seconds=None,
            granted_at=t(20),
            granted_by="prof",
        )
    ],
    "time_changes": [
        dict(
            id=1,
            changed_at=t(20),
            changed_by="prof",
            kind="extension",
            assignment="hw1",
            subject="ann",
            before="2026-01-21 00:00 UTC",
            after="until 2026-01-23 00:00 UTC",
        )
    ],
    "verdicts": [dict(id=1, case_result_id=2, publication_id=2, correct=True, reason="", regraded_at=t(26))],
    "batch_history": [
        dict(
            id=1,
            source="out",
            name="ann",
            assignment="hw1",
            digest="e" * 64,
            graded_at=t(4),
            imported_at=t(4),
            replaced_at=t(6),
            score=30.0,
            questions='{"forward": [5, 10]}',
            batch="run:1",
        )
    ],
}


def populate(engine, revision):
    """A database at `revision` holding ROWS (the columns that revision has), inserted with
    foreign keys on; returns the rows as inserted."""
    migrate.upgrade(engine, revision)
    inserted = {}
    with engine.begin() as conn:
        present = set(inspect(conn).get_table_names())
        for name, rows in ROWS.items():
            if name not in present:
                continue
            table = Table(name, MetaData(), autoload_with=conn)
            inserted[name] = [{k: v for k, v in row.items() if k in table.c} for row in rows]
            conn.execute(insert(table), inserted[name])
    return inserted


def expected_at_head(inserted: dict) -> dict:
    """What each migration since the populated revision makes of the inserted rows."""
    rows = {name: [dict(r) for r in table] for name, table in inserted.items()}
    assignments = {a["id"]: a for a in inserted["assignments"]}
    submissions = {s["id"]: s for s in inserted["submissions"]}
    for r in rows["case_results"]:
        r.setdefault("late", submissions[r["submission_id"]]["late"])  # 0002: the submission's lateness
        r.setdefault("reason", None)  # 0006: computed when a page first shows it
    if "usage" not in rows:  # 0002: every existing key starts with nothing counted
        rows["usage"] = [dict(user_id=u["id"], stored_bytes=0) for u in inserted["users"]]
    for r in rows["problems"]:
        r.setdefault("deadline", assignments[r["assignment_id"]].get("deadline"))  # 0005: the assignment's
    for r in rows["assignments"]:
        r.pop("deadline", None)  # 0005: moved to each question
    for r in rows["users"]:
        r.setdefault("email", None)  # 0005
        r.setdefault("status", "active")  # 0008
        r.setdefault("student_id", None)  # 0010: none known until a roster or `users add` gives one
    for name in ("batch_results", "batch_history"):
        for r in rows.get(name, []):
            r.setdefault("batch", "label:" + r["source"])  # 0007: the label stands for the batch
    for r in rows.get("batch_results", []):
        r.setdefault("status", "graded")  # 0009: imported before, graded as far as anyone knew
        r.setdefault("reason", "")
    return rows


def all_rows(engine) -> dict:
    with engine.connect() as conn:
        found = {}
        for name in inspect(conn).get_table_names():
            if name == "alembic_version":
                continue
            table = Table(name, MetaData(), autoload_with=conn)
            order = list(table.primary_key.columns) or list(table.c)
            found[name] = [dict(r._mapping) for r in conn.execute(select(table).order_by(*order)).all()]
    return found


def fk_engine(url):
    """The server's engine settings (on SQLite: WAL, foreign keys on), no upgrade."""
    engine = engine_for(url)
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    return engine


@pytest.mark.parametrize("kind", DATABASES)
@pytest.mark.parametrize("revision", REVISIONS)
def test_a_populated_database_at_each_revision_upgrades_to_head_keeping_every_row(kind, revision, tmp_path):
    url = database_url(kind, tmp_path)
    engine = fk_engine(url)
    inserted = populate(engine, revision)
    assert migrate.current(engine) == revision
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.head()
    with engine.connect() as conn:  # the schema db.py declares, constraints and indexes included
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    expected = expected_at_head(inserted)
    found = all_rows(engine)
    assert set(found) == set(ROWS), "a table was added or removed: give ROWS a row for it"
    for name in ROWS:
        assert found[name] == expected.get(name, []), name
    for name in ("extensions", "time_changes", "verdicts"):  # 0010: new and empty; earlier rows keep their meaning
        assert found[name] == [], name
    if kind == "sqlite":
        with engine.connect() as conn:  # the upgrade handed back its connection as it found it
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
    migrate.upgrade(engine)  # again: nothing left to do
    assert all_rows(engine) == found
    engine.dispose()


def _break_0005(url):
    """A database at 0004 with a published question, and an index named as 0005 will name its
    own: the upgrade fails inside 0005, after 0005 has moved the deadlines."""
    engine = fk_engine(url)
    populate(engine, "0004")
    with engine.begin() as conn:
        conn.execute(text("CREATE INDEX ix_users_email ON users (name)"))
    return engine


@pytest.mark.parametrize("kind", DATABASES)
def test_a_failed_upgrade_changes_nothing_and_says_how_to_proceed(kind, tmp_path):
    url = database_url(kind, tmp_path)
    engine = _break_0005(url)
    before = all_rows(engine)
    for _ in range(2):  # the second start meets the same database, not a half-upgraded one
        with pytest.raises(migrate.UpgradeFailed) as failed:
            migrate.upgrade(engine)
        message = str(failed.value)
        assert "\n" not in message
        assert message.startswith("upgrading the database from revision 0004 to head failed (")
        assert "ix_users_email" in message
        assert "still at revision 0004: fix the cause and start the server again" in message
        assert migrate.current(engine) == "0004"
        assert all_rows(engine) == before
    assert db_rows(url, "select name from assignments order by id") == [("hw1",), ("hw2",)]
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_users_email"))  # the cause fixed, the upgrade completes
    migrate.upgrade(engine)
    assert migrate.current(engine) == migrate.head()
    engine.dispose()


def test_serve_on_a_database_whose_upgrade_fails_exits_with_one_line(tmp_path):
    url = database_url("sqlite", tmp_path)
    _break_0005(url).dispose()
    run = subprocess.run(
        [sys.executable, "-m", "grader", "serve", "--db", url, "--port", "1"],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    *steps, error = run.stderr.splitlines()  # before it, alembic's log of the steps it tried
    assert not any(line.startswith("grader") for line in steps)
    assert error.startswith("grader serve: upgrading the database from revision 0004 to head failed (")
    assert db_rows(url, "select version_num from alembic_version") == [("0004",)]


def test_an_upgrade_that_would_leave_a_dangling_reference_is_rolled_back(tmp_path):
    """SQLite checks foreign keys only at the end of the upgrade (they are off while tables are
    rebuilt): a row whose parent vanished on the way makes the whole upgrade roll back."""
    url = database_url("sqlite", tmp_path)
    engine = fk_engine(url)
    populate(engine, "0004")
    with engine.begin() as conn:  # a trigger standing in for a migration that loses a parent row
        conn.execute(
            text(
                "CREATE TRIGGER lose AFTER UPDATE ON alembic_version WHEN NEW.version_num = '0006' "
                "BEGIN DELETE FROM users WHERE id = 3; END"
            )
        )
    with pytest.raises(
        migrate.UpgradeFailed,
        match=r"would refer to missing rows, e.g. submissions row 2 "
        r"to users\); every step was undone",
    ):
        migrate.upgrade(engine)
    assert migrate.current(engine) == "0004"
    assert db_rows(url, "select id from users order by id") == [(1,), (2,), (3,)]
    engine.dispose()


def test_a_database_at_head_opens_without_the_write_lock(tmp_path):
    """Every `grader users`, `gradebook` and `import-batch` makes an engine: at the head that is a
    read, so it neither waits for a busy server's writer nor needs a writable file."""
    import sqlite3
    import time

    url = database_url("sqlite", tmp_path)
    engine = fk_engine(url)
    migrate.upgrade(engine)
    writer = sqlite3.connect(str(tmp_path / "grader.db"), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # a writer holding the lock, as a server's group commit does
    try:
        t0 = time.monotonic()
        migrate.upgrade(engine)
        assert time.monotonic() - t0 < 5  # the engine's busy timeout is 10 s
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        engine.dispose()
