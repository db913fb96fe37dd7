"""Deadlines per question (a problem's own, instead of its assignment's), and an
optional e-mail per user, so that `import-batch` can match results to accounts.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("problems", sa.Column("deadline", sa.DateTime, nullable=True))
    # Every question keeps the deadline its assignment had, so no verdict changes.
    op.execute(
        "UPDATE problems SET deadline = (SELECT assignments.deadline FROM assignments "
        "WHERE assignments.id = problems.assignment_id)"
    )
    with op.batch_alter_table("assignments") as batch:
        batch.drop_column("deadline")
    op.add_column("users", sa.Column("email", sa.String(200), nullable=True))
    op.create_index("ix_users_email", "users", ["email"], unique=True)


def downgrade():
    op.drop_index("ix_users_email", table_name="users")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("email")
    op.add_column("assignments", sa.Column("deadline", sa.DateTime, nullable=True))
    op.execute(
        "UPDATE assignments SET deadline = (SELECT max(problems.deadline) FROM problems "
        "WHERE problems.assignment_id = assignments.id)"
    )
    with op.batch_alter_table("problems") as batch:
        batch.drop_column("deadline")
