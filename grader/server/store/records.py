"""Tables the gradebook adds: case descriptions of a publication, and
`grade-batch` results imported into the server's database.

They live on the same `metadata` as the protocol tables (db.py imports this
module), so `make_engine` creates them. Like the rest they are append-only,
except that re-importing a regraded submission replaces its rows; the
replaced scores are kept in `batch_history`.
"""

from sqlalchemy import (
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
)

from .metadata import metadata

# One row per case of a publication: sent by `grader publish` right after the
# answers, so the gradebook and the server's reasons can name each case.
case_notes = Table(
    "case_notes",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("publication_id", Integer, ForeignKey("publications.id"), nullable=False),
    Column("test_case_index", Integer, nullable=False),
    Column("name", String(100), nullable=False),
    Column("description", Text, nullable=False),
    UniqueConstraint("publication_id", "test_case_index"),
)

# One row per imported results.json, identified by (assignment, batch, name):
# `batch` is what the OUTDIR's batch.json records (gradebook/batch_identity.py),
# `source` only the label the gradebook shows, `name` the student. `digest`
# (sha256 of the file) makes re-importing the same file a no-op.
batch_results = Table(
    "batch_results",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("source", String(200), nullable=False),
    Column("batch", String(250), nullable=False),
    Column("name", String(200), nullable=False),
    Column("assignment", String(200), nullable=False),
    Column("digest", String(64), nullable=False),
    Column("graded_at", DateTime, nullable=False),
    Column("imported_at", DateTime, nullable=False),
    Column("score", Float, nullable=False),
    Column("output", Text, nullable=False),
    # "graded", or what the grader recorded when it could not grade: "refused" (the
    # submission could not be read), "grader error"; `reason` says why (migration 0009).
    Column("status", String(20), nullable=False, server_default="graded"),
    Column("reason", Text, nullable=False, server_default=""),
    UniqueConstraint("assignment", "batch", "name", name="uq_batch_results_identity"),
)

# Per question of an imported result: its points and maximum.
batch_questions = Table(
    "batch_questions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("result_id", Integer, ForeignKey("batch_results.id"), nullable=False, index=True),
    Column("question", String(100), nullable=False),
    Column("score", Float, nullable=False),
    Column("max_score", Float, nullable=False),
    UniqueConstraint("result_id", "question"),
)

# Per case (Gradescope "test") of an imported result.
batch_cases = Table(
    "batch_cases",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("result_id", Integer, ForeignKey("batch_results.id"), nullable=False, index=True),
    Column("position", Integer, nullable=False),
    Column("question", String(100), nullable=False),
    Column("name", String(200), nullable=False),
    Column("number", String(50), nullable=False),
    Column("score", Float, nullable=False),
    Column("max_score", Float, nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("hidden", Boolean, nullable=False),
    Column("output", Text, nullable=False),
    UniqueConstraint("result_id", "position"),
)

# The scores an import replaced (a regrade): one row per replaced result, so
# that earlier scores stay in the database and the gradebook can mark the
# cells a regrade changed. `questions` is JSON: {question: [score, max_score]}.
batch_history = Table(
    "batch_history",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("source", String(200), nullable=False),
    Column("batch", String(250), nullable=False),
    Column("name", String(200), nullable=False),
    Column("assignment", String(200), nullable=False),
    Column("digest", String(64), nullable=False),
    Column("graded_at", DateTime, nullable=False),
    Column("imported_at", DateTime, nullable=False),
    Column("replaced_at", DateTime, nullable=False),
    Column("score", Float, nullable=False),
    Column("questions", Text, nullable=False),
    Index("ix_batch_history_identity", "assignment", "batch", "name"),
)
