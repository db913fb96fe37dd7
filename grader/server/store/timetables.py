"""Tables of the time policy (migration 0010): per-student extensions, the
verdicts a republish re-judged, and the log of every change to deadlines,
extensions, the late policy, the course's zone and the verdicts.

`extensions` is kept current (one row per student, assignment and question,
replaced or deleted by `grader extension`); what it held before is in
`time_changes`, which, like `verdicts`, is append-only. Lateness itself is
never stored: it is judged at read time from each answer's arrival time and
the deadlines, extensions and late policy in force then (grader.server.gradebook.timing).
"""

from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Index, Integer, String, Table, Text, UniqueConstraint

from .metadata import metadata

# A student's own deadline for one question of an assignment ("" : every question of it):
# `deadline` (naive UTC), or `extra_seconds` added to the question's deadline in force.
extensions = Table(
    "extensions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("assignment", String(200), nullable=False),
    Column("question", String(200), nullable=False),
    Column("deadline", DateTime, nullable=True),
    Column("extra_seconds", Integer, nullable=True),
    Column("granted_at", DateTime, nullable=False),
    Column("granted_by", String(200), nullable=False),
    UniqueConstraint("user_id", "assignment", "question", name="uq_extensions_target"),
)

# Who changed what, when, from what to what: deadlines, extensions, late days, the late-penalty rule,
# the course's zone, and republished answers (a regrade). `subject`: the question or the student.
time_changes = Table(
    "time_changes",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("changed_at", DateTime, nullable=False),
    Column("changed_by", String(200), nullable=False),
    Column("kind", String(40), nullable=False),
    Column("assignment", String(200), nullable=False),
    Column("subject", String(200), nullable=False),
    Column("before", Text, nullable=False),
    Column("after", Text, nullable=False),
)

# A case result re-judged against a later publication of its question (a republish): the
# newest row of a case result is its verdict in force; the original stays in case_results.
verdicts = Table(
    "verdicts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("case_result_id", Integer, ForeignKey("case_results.id"), nullable=False),
    Column("publication_id", Integer, ForeignKey("publications.id"), nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("reason", Text, nullable=False),
    Column("regraded_at", DateTime, nullable=False),
    Index("ix_verdicts_case_result", "case_result_id", "id"),
)
