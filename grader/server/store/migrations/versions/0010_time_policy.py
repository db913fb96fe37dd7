"""Time policy: per-student extensions, the log of every change to deadlines,
extensions and the late policy (`time_changes`), the verdicts a republish
re-judged (`verdicts`), and an optional student (SIS) ID per account. Nothing
existing changes: lateness is judged at read time from each answer's arrival.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("users", sa.Column("student_id", sa.String(100), nullable=True))
    op.create_table(
        "extensions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("assignment", sa.String(200), nullable=False),
        sa.Column("question", sa.String(200), nullable=False),
        sa.Column("deadline", sa.DateTime, nullable=True),
        sa.Column("extra_seconds", sa.Integer, nullable=True),
        sa.Column("granted_at", sa.DateTime, nullable=False),
        sa.Column("granted_by", sa.String(200), nullable=False),
        sa.UniqueConstraint("user_id", "assignment", "question", name="uq_extensions_target"),
    )
    op.create_table(
        "time_changes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("changed_at", sa.DateTime, nullable=False),
        sa.Column("changed_by", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("assignment", sa.String(200), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("before", sa.Text, nullable=False),
        sa.Column("after", sa.Text, nullable=False),
    )
    op.create_table(
        "verdicts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("case_result_id", sa.Integer, sa.ForeignKey("case_results.id"), nullable=False),
        sa.Column("publication_id", sa.Integer, sa.ForeignKey("publications.id"), nullable=False),
        sa.Column("correct", sa.Boolean, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("regraded_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_verdicts_case_result", "verdicts", ["case_result_id", "id"])


def downgrade():
    op.drop_index("ix_verdicts_case_result", table_name="verdicts")
    op.drop_table("verdicts")
    op.drop_table("time_changes")
    op.drop_table("extensions")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("student_id")
