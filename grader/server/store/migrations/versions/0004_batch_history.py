"""Regrades keep history: the scores an import replaced (see records.py).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "batch_history",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("source", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("assignment", sa.String(200), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("graded_at", sa.DateTime, nullable=False),
        sa.Column("imported_at", sa.DateTime, nullable=False),
        sa.Column("replaced_at", sa.DateTime, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("questions", sa.Text, nullable=False),
    )
    op.create_index("ix_batch_history_source_name", "batch_history", ["source", "name"])


def downgrade():
    op.drop_index("ix_batch_history_source_name", table_name="batch_history")
    op.drop_table("batch_history")
