"""Deadlines and extensions as instructors change them, each change logged with what it replaced.

A question's deadline lives on its problem row (`grader deadline`, or `grader
publish --deadline`); a student's extension is their own deadline for one
question or every question of an assignment: a new time, or a duration added
to the question's deadline in force. Both are judged at read time, so every
earlier answer is re-judged at once (judge.py).
"""

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from grader.server.store.db import assignments, now, problems, users
from grader.server.store.timetables import extensions

from . import changes, clock
from .rules import TimeError, duration_text, shown


@dataclass(frozen=True)
class Moved:
    """One question's deadline for one student (or everyone: student ""), before and after."""

    student: str
    label: str
    before: Optional[dt.datetime]
    after: Optional[dt.datetime]

    def line(self, zone: str) -> str:
        who = f"{self.student}: " if self.student else ""
        return f"{who}{self.label} due {shown(self.after, zone)} (was {shown(self.before, zone)})"


def questions(conn: Connection, assignment: str, question: str = "") -> list:
    """(problem id, name) of the assignment's questions on the server (or the one named), else TimeError."""
    rows = conn.execute(
        select(problems.c.id, problems.c.name)
        .join(assignments, assignments.c.id == problems.c.assignment_id)
        .where(assignments.c.name == assignment)
        .order_by(problems.c.name)
    ).all()
    if not rows:
        raise TimeError(
            f"assignment {assignment!r} has no published question on this server; publish it first (grader publish)"
        )
    if question:
        named = [r for r in rows if r.name == question]
        if not named:
            raise TimeError(
                f"{assignment} has no question {question!r} on this server; give one of "
                + ", ".join(r.name for r in rows)
            )
        rows = named
    return [tuple(r) for r in rows]


def set_deadline(conn: Connection, assignment: str, question: str, when: Optional[dt.datetime], by: str) -> list:
    """Set (None: remove) the deadline of one question, or every question of the assignment; logged."""
    zone, moved = clock.zone(conn), []
    for pid, name in questions(conn, assignment, question):
        before = conn.execute(select(problems.c.deadline).where(problems.c.id == pid)).scalar()
        conn.execute(update(problems).where(problems.c.id == pid).values(deadline=when))
        changes.record(conn, by, "deadline", assignment, name, shown(before, zone), shown(when, zone))
        moved.append(Moved("", f"{assignment}/{name}", before, when))
    return moved


def record_published_deadline(conn: Connection, assignment: str, question: str, before, after, by: str):
    """Log a deadline `grader publish --deadline` changed (in the publish's transaction)."""
    if before != after:
        zone = clock.zone(conn)
        changes.record(conn, by, "deadline", assignment, question, shown(before, zone), shown(after, zone))


def _student(conn: Connection, name: str) -> int:
    row = conn.execute(select(users.c.id, users.c.role).where(users.c.name == name)).first()
    if row is None or row.role != "student":
        raise TimeError(f"no student named {name!r}; `grader users list` shows the accounts")
    return row.id


def grant(
    conn: Connection,
    student: str,
    assignment: str,
    question: str,
    until: Optional[dt.datetime],
    extra: Optional[dt.timedelta],
    by: str,
) -> list:
    """Give `student` their own deadline (`until`) or `extra` time, for one question or ("") all; logged.
    The deadlines in force for them before and after, per question."""
    if (until is None) == (extra is None):
        raise TimeError("give the new deadline (--until) or the time added (--extra), one of them")
    uid, affected = _student(conn, student), questions(conn, assignment, question)
    before = clock.read(conn, student)
    where = (extensions.c.user_id == uid, extensions.c.assignment == assignment, extensions.c.question == question)
    values = dict(
        deadline=until,
        extra_seconds=None if extra is None else int(extra.total_seconds()),
        granted_at=now(),
        granted_by=by[:200],
    )
    if conn.execute(select(extensions.c.id).where(*where)).first():
        conn.execute(update(extensions).where(*where).values(**values))
    else:
        conn.execute(insert(extensions).values(user_id=uid, assignment=assignment, question=question, **values))
    return _logged(
        conn,
        student,
        assignment,
        question,
        affected,
        before,
        by,
        f"until {shown(until, clock.zone(conn))}" if until else f"+{duration_text(extra)}",
    )


def clear(conn: Connection, student: str, assignment: str, question: str, by: str) -> list:
    uid, affected = _student(conn, student), questions(conn, assignment, question)
    before = clock.read(conn, student)
    gone = conn.execute(
        delete(extensions).where(
            extensions.c.user_id == uid, extensions.c.assignment == assignment, extensions.c.question == question
        )
    ).rowcount
    if not gone:
        raise TimeError(
            f"{student} has no extension for {assignment}{'/' + question if question else ''}; "
            "`grader extension list` shows them"
        )
    return _logged(conn, student, assignment, question, affected, before, by, "cleared")


def _logged(conn, student, assignment, question, affected, before, by, what) -> list:
    after, zone = clock.read(conn, student), clock.zone(conn)
    moved = [
        Moved(
            student,
            f"{assignment}/{name}",
            before.due(student, f"{assignment}/{name}"),
            after.due(student, f"{assignment}/{name}"),
        )
        for _, name in affected
    ]
    scope = f"{assignment}/{question}" if question else f"{assignment} (every question)"
    changes.record(
        conn,
        by,
        "extension",
        assignment,
        student,
        "; ".join(shown(m.before, zone) for m in moved),
        f"{what} for {scope}: " + "; ".join(f"{m.label} {shown(m.after, zone)}" for m in moved),
    )
    return moved


def listing(conn: Connection) -> list:
    """(student, scope, what, granted_at, granted_by) of every extension in force."""
    rows = conn.execute(
        select(
            users.c.name,
            extensions.c.assignment,
            extensions.c.question,
            extensions.c.deadline,
            extensions.c.extra_seconds,
            extensions.c.granted_at,
            extensions.c.granted_by,
        )
        .join(users, users.c.id == extensions.c.user_id)
        .order_by(users.c.name, extensions.c.assignment, extensions.c.question)
    ).all()
    zone = clock.zone(conn)
    return [
        (
            who,
            f"{a}/{q}" if q else f"{a} (every question)",
            f"until {shown(d, zone)}" if d else f"+{duration_text(dt.timedelta(seconds=s or 0))}",
            at,
            by,
        )
        for who, a, q, d, s, at, by in rows
    ]
