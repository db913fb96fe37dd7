"""The schema as it was before migrations: users, settings, assignments,
problems, publications, submissions, case results.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "settings", sa.Column("name", sa.String(100), primary_key=True), sa.Column("value", sa.Text, nullable=False)
    )
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("deadline", sa.DateTime, nullable=True),
    )
    op.create_table(
        "problems",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("assignment_id", sa.Integer, sa.ForeignKey("assignments.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("weight", sa.Float, nullable=False),
        sa.UniqueConstraint("assignment_id", "name"),
    )
    op.create_table(
        "publications",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("problem_id", sa.Integer, sa.ForeignKey("problems.id"), nullable=False, index=True),
        sa.Column("published_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("rtol", sa.Float, nullable=False),
        sa.Column("atol", sa.Float, nullable=False),
        sa.Column("num_cases", sa.Integer, nullable=False),
        sa.Column("values_json", sa.Text, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("problem_id", sa.Integer, sa.ForeignKey("problems.id"), nullable=False),
        sa.Column("publication_id", sa.Integer, sa.ForeignKey("publications.id"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("late", sa.Boolean, nullable=False),
    )
    op.create_table(
        "case_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("test_case_index", sa.Integer, nullable=False),
        sa.Column("correct", sa.Boolean, nullable=False),
        sa.Column("value_sha256", sa.String(64), nullable=False),
        sa.Column("value_json", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("submission_id", "test_case_index"),
    )


def downgrade():
    for table in ("case_results", "submissions", "publications", "problems", "assignments", "settings", "users"):
        op.drop_table(table)
