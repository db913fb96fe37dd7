"""What one student's page shows depends on, read as one small tuple in one query:
a rendered page is reused only while this tuple is unchanged.

Per student: their account, their submissions and case results (rows are only
ever added; a stored reason fills in a case result before any page shows it).
For everyone: publications (a publish also sets its problem's weight and
deadline, in the same transaction), the problems themselves, case
descriptions, and imported results (a regrade deletes a result and inserts its
replacement, whose id SQLite may reuse, so the archive row it writes and the
import time count too), and the grading policies set on the server.
"""

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from grader.server.store.db import case_results, problems, publications, settings, submissions, users
from grader.server.store.records import batch_history, batch_results, case_notes
from grader.server.store.timetables import time_changes, verdicts


def student_version(conn: Connection, name: str) -> tuple:
    """A tuple that changes whenever anything on `name`'s results page changes."""
    uid = select(users.c.id).where(users.c.name == name).scalar_subquery()
    mine = select(submissions.c.id).where(submissions.c.user_id == uid)
    answered = case_results.c.submission_id.in_(mine)

    def one(expr, *where):
        return select(expr).where(*where).scalar_subquery()

    return tuple(
        conn.execute(
            select(
                uid,
                one(func.max(submissions.c.id), submissions.c.user_id == uid),
                one(func.count(), submissions.c.user_id == uid),
                one(func.max(case_results.c.id), answered),
                one(func.count(), answered),
                one(func.max(publications.c.id)),
                one(func.count(problems.c.id)),
                one(func.sum(problems.c.weight)),
                one(func.count(problems.c.deadline)),
                one(func.min(problems.c.deadline)),
                one(func.max(problems.c.deadline)),
                one(func.max(case_notes.c.id)),
                one(func.max(batch_results.c.id)),
                one(func.count(batch_results.c.id)),
                one(func.max(batch_results.c.imported_at)),
                one(func.max(batch_history.c.id)),
                one(settings.c.value, settings.c.name == "policy:version"),  # policy.VERSION: a grading policy set
                # Deadlines, extensions, late days, penalties, the zone, regrades: each change is logged there.
                one(func.max(time_changes.c.id)),
                one(func.max(verdicts.c.id)),
            )
        ).one()
    )
