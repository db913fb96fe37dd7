"""Needs attention, not zero: an imported result records whether the grader
graded it (`status` graded) or could not (refused: the submission could not
be read; grader error), and `reason`, the grader's one-line reason. Every
result imported before was graded as far as the database knows.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("batch_results", sa.Column("status", sa.String(20), nullable=False, server_default="graded"))
    op.add_column("batch_results", sa.Column("reason", sa.Text, nullable=False, server_default=""))


def downgrade():
    with op.batch_alter_table("batch_results") as batch:
        batch.drop_column("reason")
        batch.drop_column("status")
