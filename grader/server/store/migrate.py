"""Schema migrations with Alembic, run from code (no alembic.ini to ship).

`upgrade(engine)` brings any database to the newest revision: a new one is
created from scratch, one made before migrations existed (tables but no
`alembic_version`) is first stamped as the baseline. On PostgreSQL an
advisory lock makes server processes starting together migrate one at a time.

To change the schema, add a file to `migrations/versions/` whose
`down_revision` is the current head, and mirror the change in `db.py`.
"""
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BASELINE = "0001"
_LOCK_ID = 727_001  # any constant: the advisory lock of this schema
logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)  # a line per plugin, every start


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def upgrade(engine: Engine, revision: str = "head"):
    cfg = alembic_config()
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_LOCK_ID})")
        cfg.attributes["connection"] = conn
        tables = set(inspect(conn).get_table_names())
        if "users" in tables and "alembic_version" not in tables:
            command.stamp(cfg, BASELINE)  # made by create_all before migrations existed
        command.upgrade(cfg, revision)


def current(engine: Engine):
    """The revision a database is at (None before any migration)."""
    from alembic.runtime.migration import MigrationContext
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
