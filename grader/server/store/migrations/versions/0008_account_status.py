"""Accounts a course can run: each user has a status (active, revoked: its key
no longer works until one is reissued, removed: kept with its history, its
name never given to anyone else). Every account made before is active.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("users", sa.Column("status", sa.String(20), nullable=False, server_default="active"))


def downgrade():
    with op.batch_alter_table("users") as batch:
        batch.drop_column("status")
