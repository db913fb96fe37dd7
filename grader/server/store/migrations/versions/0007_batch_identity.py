"""An imported result is identified by its assignment, its batch (from the
batch's batch.json) and its student, no longer by the label of its OUTDIR:
two OUTDIRs named alike, of two assignments, no longer replace each other.

Results imported before this revision keep their label as their batch
("label:<source>"); the next import of that assignment from an OUTDIR with
that label takes them over (see gradebook/importer.py).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# Names for the constraints 0003 left unnamed, as SQLite reflects them (PostgreSQL named them itself).
NAMING = {"uq": "uq_%(table_name)s_%(column_0_name)s"}
IDENTITY = ["assignment", "batch", "name"]


def _old_unique() -> str:
    return "batch_results_source_name_key" if op.get_bind().dialect.name == "postgresql" else "uq_batch_results_source"


def upgrade():
    for table in ("batch_results", "batch_history"):
        op.add_column(table, sa.Column("batch", sa.String(250), nullable=False, server_default=""))
        op.execute(f"UPDATE {table} SET batch = 'label:' || source")
    with op.batch_alter_table("batch_results", naming_convention=NAMING) as batch:
        batch.drop_constraint(_old_unique(), type_="unique")
        batch.create_unique_constraint("uq_batch_results_identity", IDENTITY)
    op.drop_index("ix_batch_history_source_name", table_name="batch_history")
    op.create_index("ix_batch_history_identity", "batch_history", IDENTITY)


def downgrade():
    op.drop_index("ix_batch_history_identity", table_name="batch_history")
    op.create_index("ix_batch_history_source_name", "batch_history", ["source", "name"])
    with op.batch_alter_table("batch_results") as batch:
        batch.drop_constraint("uq_batch_results_identity", type_="unique")
        batch.create_unique_constraint("batch_results_source_name_key", ["source", "name"])
    for table in ("batch_history", "batch_results"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("batch")
