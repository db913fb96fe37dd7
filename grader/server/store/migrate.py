"""Schema migrations with Alembic, run from code (no alembic.ini to ship).

`upgrade(engine)` brings any database to the newest revision: a new one is
created from scratch, one made before migrations existed (tables but no
`alembic_version`) is first stamped as the baseline.

An upgrade finishes or changes nothing: every step from the database's
revision to the target runs in one transaction, and any error rolls all of
them back, leaving the database at its old revision (`UpgradeFailed` says
which, and how to proceed). PostgreSQL has transactional DDL; an advisory
lock makes server processes starting together migrate one at a time. SQLite
needs more care, following its documented table-rebuild procedure:

- Python's sqlite3 opens a transaction only before INSERT/UPDATE/DELETE, so
  an ALTER TABLE first in line would commit on its own: the upgrade opens
  the transaction itself (BEGIN IMMEDIATE, which also makes a second process
  wait for the first, then find nothing left to do);
- foreign keys (which the server's engine turns on) are switched off for the
  upgrade's connection, since rebuilding a table drops the original, and
  checked with `PRAGMA foreign_key_check` before the commit instead: an
  upgrade that would leave a dangling reference is rolled back.

To change the schema, add a file to `migrations/versions/` whose
`down_revision` is the current head, and mirror the change in `db.py`; the
upgrade test (tests/server/test_server_upgrades.py) fills a database at each
earlier revision and compares every row after the upgrade, so give it the
values your migration derives.
"""

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection, Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BASELINE = "0001"
_LOCK_ID = 727_001  # any constant: the advisory lock of this schema
logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)  # a line per plugin, every start


class UpgradeFailed(RuntimeError):
    """An upgrade that was rolled back; the message is one line naming the revision kept and what to do."""


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def upgrade(engine: Engine, revision: str = "head"):
    """Bring the database to `revision` in one transaction, or raise `UpgradeFailed` having changed nothing."""
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            _upgrade_sqlite(conn, revision)
        else:
            _upgrade_transactional(conn, revision)


def current(engine: Engine):
    """The revision a database is at (None before any migration)."""
    with engine.connect() as conn:
        return _revision(conn)


def _revision(conn: Connection):
    return MigrationContext.configure(conn).get_current_revision()


def _upgrade_transactional(conn: Connection, revision: str):
    conn.begin()
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_LOCK_ID})")
    before = _revision(conn)
    try:
        _run(conn, revision)
        conn.commit()
    except Exception as e:
        conn.rollback()
        raise _failed(before, revision, e) from e


def _at(conn: Connection, revision: str) -> bool:
    """Whether the database is at `revision` already (read only: no lock taken)."""
    wanted = head() if revision == "head" else revision
    found = _revision(conn)
    conn.rollback()
    return found == wanted


def _upgrade_sqlite(conn: Connection, revision: str):
    if _at(conn, revision):  # the usual start: a read, so a read-only database at head still opens
        return
    keys_on = conn.exec_driver_sql("PRAGMA foreign_keys").scalar()
    conn.exec_driver_sql("PRAGMA foreign_keys=OFF")  # a no-op inside a transaction: set it first
    conn.commit()
    before = None
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        before = _revision(conn)
        dangling = _dangling_references(conn)
        _run(conn, revision)
        added = _dangling_references(conn) - dangling
        if added:
            table, rowid, parent = sorted(added)[0]
            raise RuntimeError(f"{len(added)} row(s) would refer to missing rows, e.g. {table} row {rowid} to {parent}")
        conn.commit()
    except Exception as e:
        conn.rollback()
        raise _failed(before, revision, e) from e
    finally:
        if keys_on:
            conn.exec_driver_sql("PRAGMA foreign_keys=ON")
            conn.commit()


def _run(conn: Connection, revision: str):
    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    tables = set(inspect(conn).get_table_names())
    if "users" in tables and "alembic_version" not in tables:
        command.stamp(cfg, BASELINE)  # made by create_all before migrations existed
    command.upgrade(cfg, revision)


def _dangling_references(conn: Connection) -> set:
    """(table, rowid, parent table) of every row whose foreign key finds no row."""
    return {(r[0], r[1], r[2]) for r in conn.exec_driver_sql("PRAGMA foreign_key_check").all()}


def _failed(before, target: str, error: Exception) -> UpgradeFailed:
    lines = str(getattr(error, "orig", None) or error).strip().splitlines() or [type(error).__name__]
    at = before or "none (an empty database)"
    return UpgradeFailed(
        f"upgrading the database from revision {at} to {target} failed ({lines[0]}); every step was undone "
        f"and the database is still at revision {at}: fix the cause and start the server again (the upgrade "
        "restarts from there), or keep using the grader version that made it"
    )
