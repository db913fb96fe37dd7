"""Database schema (SQLAlchemy Core) and engine set-up.

The schema is created and changed by the Alembic migrations in
`migrations/` (`migrate.upgrade`); the tables here mirror the newest one.
Every table is append-only except `settings`, `problems.deadline`,
`extensions` (timetables.py, each change logged in `time_changes`) and
the bookkeeping tables (sessions, rate buckets, usage):
submissions, case results and publications are never updated, so the server
may cache them forever (see `protocol.LRU`), even with several server processes.
"""

import datetime as dt
import logging
import os
import threading

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from . import records, timetables  # noqa: F401  (their tables join `metadata` before create_all)
from .metadata import metadata

log = logging.getLogger("grader.server.store.db")


users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("role", String(20), nullable=False),
    # sha256 of the key: keys are 192 random bits, so a fast hash is enough.
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("created_at", DateTime, nullable=False),
    # Optional; `import-batch` matches a result to its student by it.
    Column("email", String(200), nullable=True, unique=True, index=True),
    # active; revoked (its key replaced by a hash no key has, until one is reissued); removed
    # (kept with its history, its name never reused): see accounts/users.py.
    Column("status", String(20), nullable=False, server_default="active"),
    # Optional: the student's ID in the school's system (SIS), for the Canvas and Moodle exports (0010).
    Column("student_id", String(100), nullable=True),
)

settings = Table(
    "settings",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("value", Text, nullable=False),
)

assignments = Table(
    "assignments",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
)

problems = Table(
    "problems",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("assignment_id", Integer, ForeignKey("assignments.id"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("weight", Float, nullable=False, default=1.0),
    # Each question has its own deadline (None: none); an answer after the one in force is late.
    Column("deadline", DateTime, nullable=True),
    UniqueConstraint("assignment_id", "name"),
)

# One row per publish; a submission is graded against the publication that was current
# when it started, and re-judged when its question is republished (timetables.verdicts).
publications = Table(
    "publications",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("problem_id", Integer, ForeignKey("problems.id"), nullable=False, index=True),
    Column("published_by", Integer, ForeignKey("users.id"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("rtol", Float, nullable=False),
    Column("atol", Float, nullable=False),
    Column("num_cases", Integer, nullable=False),
    Column("values_json", Text, nullable=False),
)

submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False, index=True),
    Column("problem_id", Integer, ForeignKey("problems.id"), nullable=False),
    Column("publication_id", Integer, ForeignKey("publications.id"), nullable=False),
    Column("created_at", DateTime, nullable=False),
    # Judged on arrival for the answer to /submit only: the gradebook judges lateness at read time.
    Column("late", Boolean, nullable=False),
)

case_results = Table(
    "case_results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("submission_id", Integer, ForeignKey("submissions.id"), nullable=False),
    Column("test_case_index", Integer, nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("value_sha256", String(64), nullable=False),
    # NULL when the value was larger than ServerConfig.max_stored_value_bytes.
    Column("value_json", Text, nullable=True),
    Column("created_at", DateTime, nullable=False),
    # Judged when the case is answered (the first answer decides): starting a
    # submission before the deadline does not make answers sent after it on time.
    Column("late", Boolean, nullable=False, default=False),
    # Why the value is wrong ("" when right), judged once when the case is answered, so
    # pages never re-grade stored values. NULL: answered before it was kept (migration 0006).
    Column("reason", Text, nullable=True),
    UniqueConstraint("submission_id", "test_case_index"),
    # Every column the pages read, so they are read from this index alone: SQLite keeps a row's
    # columns in order, and reaching one after a 1 MB value_json walks all of its pages.
    Index("ix_case_results_verdicts", "submission_id", "test_case_index", "correct", "late", "reason"),
)

# Browser sessions, so that signing out ends a session on every server process.
sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("expires_at", DateTime, nullable=False),
    # Expired sessions are swept, and a key's oldest dropped, by index, never by a scan.
    Index("ix_sessions_expires_at", "expires_at"),
    Index("ix_sessions_user_id_expires_at", "user_id", "expires_at"),
)

# Per-key token buckets shared by every server process (see limits.SharedRateLimiter).
rate_buckets = Table(
    "rate_buckets",
    metadata,
    Column("user_id", Integer, primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("updated", Float, nullable=False),  # seconds since the epoch
)

# Bytes each key has stored (submissions and case values), for the storage quota.
usage = Table(
    "usage",
    metadata,
    Column("user_id", Integer, primary_key=True),
    Column("stored_bytes", BigInteger, nullable=False),
)


def now():
    """Naive UTC: SQLite has no time zones, so all stored times are UTC."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _sqlite_pragmas(dbapi_conn, _record):
    cur = dbapi_conn.cursor()
    # WAL lets readers run while the writer commits; synchronous=FULL fsyncs
    # each commit, which group commit makes affordable (one fsync per batch).
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA busy_timeout=10000")
    # No checkpoint inside a commit: copying the WAL into the database (and its
    # fsync) would stall the writer for tens of ms. `Checkpointer` does it aside.
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def engine_for(url: str) -> Engine:
    """An engine for any SQLAlchemy URL with the server's settings (SQLite tuned for one
    writer, foreign keys on), without touching the schema."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    return engine


def make_engine(url: str) -> Engine:
    """`engine_for(url)` with the database upgraded to the newest schema (or
    `migrate.UpgradeFailed`, having changed nothing)."""
    engine = engine_for(url)
    from .migrate import upgrade  # alembic is imported only when an engine is made

    try:
        upgrade(engine)
    except Exception:
        engine.dispose()
        raise
    return engine


class StorageLost(RuntimeError):
    """The database files vanished or turned read-only: writes would be lost (HTTP 503)."""


class StorageGuard:
    """Notices an SQLite database file deleted, replaced or made read-only
    under the running server.

    SQLite keeps writing to a deleted file through its open descriptors, so
    without this the server would acknowledge writes that nobody can ever
    read. `check()` is a few stat calls: the writer runs it around every
    group commit, the checkpointer every quarter second. Once lost, always
    lost: a file put back is not the one the server had open. A no-op for
    other databases (their errors surface as database errors).
    """

    def __init__(self, engine: Engine):
        db = engine.url.database if engine.dialect.name == "sqlite" else None
        self.path = os.path.abspath(db) if db and db != ":memory:" and not db.startswith("file:") else None
        self.problem = None
        self._ids = {}  # path -> (device, inode) when first seen
        if self.path:
            self._problem()

    def check(self):
        if self.path is None:
            return
        problem = self.problem or self._problem()
        if problem and self.problem is None:
            self.problem = problem
            log.error("refusing writes: %s; restore the database and restart the server", problem)
        if problem:
            raise StorageLost(problem)

    def _problem(self):
        for path, required in ((self.path, True), (self.path + "-wal", False)):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                if required or path in self._ids:
                    return f"database file {path} was deleted"
                continue
            seen = self._ids.setdefault(path, (st.st_dev, st.st_ino))
            if seen != (st.st_dev, st.st_ino):
                return f"database file {path} was replaced by another file"
            # Mode bits too: os.access says yes to root whatever the mode.
            if not st.st_mode & 0o222 or not os.access(path, os.W_OK):
                return f"database file {path} is read-only"
        return None


class Checkpointer:
    """Copies SQLite's WAL into the database every `interval` seconds, on its
    own connection, so the writer never waits for it (PASSIVE checkpoints do
    not block writers). A no-op for other databases."""

    def __init__(self, engine: Engine, interval: float = 0.25, guard: StorageGuard = None):
        self._engine, self._interval, self._guard = engine, interval, guard
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="grader-checkpoint", daemon=True)
        self.enabled = engine.dialect.name == "sqlite"

    def start(self):
        if self.enabled:
            self._thread.start()

    def stop(self):
        if self.enabled and self._thread.is_alive():
            self._stop.set()
            self._thread.join(10)
            if self._guard is None or self._guard.problem is None:
                self.checkpoint("TRUNCATE")  # leave a small WAL behind

    def checkpoint(self, mode: str = "PASSIVE"):
        try:
            with self._engine.connect() as conn:
                conn.exec_driver_sql(f"PRAGMA wal_checkpoint({mode})")
        except SQLAlchemyError as e:  # busy or locked: try again next round
            log.warning("checkpoint skipped: %s", e)

    def _loop(self):
        while not self._stop.wait(self._interval):
            try:
                if self._guard is not None:
                    self._guard.check()  # logs the loss even when nobody writes
            except StorageLost:
                continue
            self.checkpoint()
