"""The log of every change to time and verdicts: who, when, what moved, from what to what.

Kinds: "deadline" (a question's), "extension" (a student's), "late days" (the course's
budget), "late penalty" (an assignment's rule), "zone" (the course's), "regrade" (a
republished question re-judged its stored answers). Rows are only ever added.
"""

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import insert, or_, select
from sqlalchemy.engine import Connection

from grader.server.store.db import now
from grader.server.store.timetables import time_changes


@dataclass(frozen=True)
class Change:
    id: int
    changed_at: dt.datetime
    changed_by: str
    kind: str
    assignment: str
    subject: str
    before: str
    after: str


def record(conn: Connection, by: str, kind: str, assignment: str, subject: str, before: str, after: str) -> None:
    """Log one change in the caller's transaction (the change and its record commit together)."""
    conn.execute(
        insert(time_changes).values(
            changed_at=now(),
            changed_by=by[:200],
            kind=kind,
            assignment=assignment[:200],
            subject=subject[:200],
            before=before,
            after=after,
        )
    )


def listing(conn: Connection, student: Optional[str] = None, limit: int = 200) -> tuple:
    """The newest changes first; with `student`, those that bear on that student (their own
    extensions, and every change to a deadline, penalty, budget, zone or verdicts)."""
    query = select(time_changes).order_by(time_changes.c.id.desc()).limit(limit)
    if student is not None:
        query = query.where(or_(time_changes.c.kind != "extension", time_changes.c.subject == student))
    return tuple(Change(*row) for row in conn.execute(query).all())


def latest_id(conn: Connection) -> Optional[int]:
    """Changes pages depend on, as one number (freshness)."""
    from sqlalchemy import func

    return conn.execute(select(func.max(time_changes.c.id))).scalar()


def what(c: Change) -> str:
    """'deadline hw1/forward', 'extension hw1 ann', 'zone': what a change moved."""
    where = f" {c.assignment}" if c.assignment else ""
    if c.subject:
        where += f"/{c.subject}" if c.kind in ("deadline", "regrade") else f" {c.subject}"
    return c.kind + where


def render(changes) -> str:
    """One line per change, newest first, as `grader changes` prints them (pure)."""
    if not changes:
        return "no changes recorded"
    return "\n".join(
        f"{c.changed_at:%Y-%m-%d %H:%M} UTC  {c.changed_by}  {what(c)}: {c.before} -> {c.after}" for c in changes
    )
