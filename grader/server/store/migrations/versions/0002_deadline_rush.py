"""Lateness per answered case; server-side sessions; rate buckets and storage
use shared by every server process.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    # Cases answered before this revision keep the lateness of their submission.
    op.add_column("case_results", sa.Column("late", sa.Boolean, nullable=False, server_default=sa.false()))
    op.execute(
        "UPDATE case_results SET late = (SELECT submissions.late FROM submissions "
        "WHERE submissions.id = case_results.submission_id)"
    )
    op.create_table(
        "sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "rate_buckets",
        sa.Column("user_id", sa.Integer, primary_key=True),
        sa.Column("tokens", sa.Float, nullable=False),
        sa.Column("updated", sa.Float, nullable=False),
    )
    op.create_table(
        "usage",
        sa.Column("user_id", sa.Integer, primary_key=True),
        sa.Column("stored_bytes", sa.BigInteger, nullable=False),
    )
    # Every key has its row from the start (the server only ever updates it). What keys
    # stored before quotas existed is not counted: the quota starts now.
    op.execute("INSERT INTO usage (user_id, stored_bytes) SELECT id, 0 FROM users")


def downgrade():
    op.drop_table("usage")
    op.drop_table("rate_buckets")
    op.drop_table("sessions")
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("late")
