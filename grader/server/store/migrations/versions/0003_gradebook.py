"""The class gradebook: case descriptions sent at publish, and grade-batch
results imported into the server's database (see records.py).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "case_notes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("publication_id", sa.Integer, sa.ForeignKey("publications.id"), nullable=False),
        sa.Column("test_case_index", sa.Integer, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.UniqueConstraint("publication_id", "test_case_index"),
    )
    op.create_table(
        "batch_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("source", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("assignment", sa.String(200), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("graded_at", sa.DateTime, nullable=False),
        sa.Column("imported_at", sa.DateTime, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("output", sa.Text, nullable=False),
        sa.UniqueConstraint("source", "name"),
    )
    op.create_table(
        "batch_questions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("result_id", sa.Integer, sa.ForeignKey("batch_results.id"), nullable=False, index=True),
        sa.Column("question", sa.String(100), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("max_score", sa.Float, nullable=False),
        sa.UniqueConstraint("result_id", "question"),
    )
    op.create_table(
        "batch_cases",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("result_id", sa.Integer, sa.ForeignKey("batch_results.id"), nullable=False, index=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("question", sa.String(100), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("number", sa.String(50), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("max_score", sa.Float, nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("hidden", sa.Boolean, nullable=False),
        sa.Column("output", sa.Text, nullable=False),
        sa.UniqueConstraint("result_id", "position"),
    )


def downgrade():
    for table in ("batch_cases", "batch_questions", "batch_results", "case_notes"):
        op.drop_table(table)
