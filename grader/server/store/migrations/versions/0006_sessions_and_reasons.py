"""Sessions found by expiry and by key without a table scan; the reason a case
is wrong stored with its verdict, and the verdicts readable from an index
without the stored values.

Rows answered before this revision have no stored reason: each is computed
once, the first time a page shows it, and stored then (see
gradebook.details.unstored_reasons), not here: recomputing every stored value
of a whole course would hold the upgrade for as long as that takes.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_sessions_expires_at", "sessions", ["expires_at"])
    op.create_index("ix_sessions_user_id_expires_at", "sessions", ["user_id", "expires_at"])
    op.add_column("case_results", sa.Column("reason", sa.Text, nullable=True))
    op.create_index(
        "ix_case_results_verdicts", "case_results", ["submission_id", "test_case_index", "correct", "late", "reason"]
    )


def downgrade():
    op.drop_index("ix_case_results_verdicts", table_name="case_results")
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("reason")
    op.drop_index("ix_sessions_user_id_expires_at", table_name="sessions")
    op.drop_index("ix_sessions_expires_at", table_name="sessions")
