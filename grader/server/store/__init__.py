"""The server's database: schema (`db`, `records` on one `metadata`), Alembic
migrations (`migrate`, `migrations/`), the group-commit `writer`, and the
protocol's records and writes (`protocol`: publications, submissions, case
results, quotas).

The core idea: rows are append-only (bar a few bookkeeping tables), so what
is read may be cached forever, and one writer thread commits every write in
groups, so an acknowledged answer is on disk.
"""
