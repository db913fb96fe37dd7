"""What is in force now: the course's zone and late-day budget, each assignment's
late rule, each question's deadline and each student's extensions.

The course declares them in its assignment.toml's [policy.time] (the
installation's assignment); `grader course ...` overrides them on the server,
stored in `settings` (course:zone, course:late_days, late:ASSIGNMENT), each change
logged (changes.py). A [policy.time] that does not read is shown by
`grader course show` and left out of grading (the default: no zone, no late
days, no penalty) rather than breaking every page.
"""

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Optional

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from grader.server.store.db import assignments, problems, settings, users
from grader.server.store.timetables import extensions

from . import changes
from . import rules as R

log = logging.getLogger("grader.server.gradebook.timing")
ZONE, LATE_DAYS, RULE = "course:zone", "course:late_days", "late:"


@dataclass(frozen=True)
class Clock:
    zone: str = ""
    late_days: int = 0
    rules: dict = field(default_factory=dict)  # assignment -> LateRule (absent: none)
    deadlines: dict = field(default_factory=dict)  # "assignment/question" -> naive UTC deadline or None
    extensions: dict = field(default_factory=dict)  # (student, assignment, question or "") -> (deadline, extra)

    def rule(self, assignment: str) -> R.LateRule:
        return self.rules.get(assignment, R.LateRule())

    def due(self, student: str, label: str) -> Optional[dt.datetime]:
        """The deadline in force for one student and question, before any late day."""
        assignment, _, question = label.partition("/")
        base = self.deadlines.get(label)
        ext = self.extensions.get((student, assignment, question)) or self.extensions.get((student, assignment, ""))
        if ext is None:
            return base
        deadline, extra = ext
        if deadline is not None:
            return deadline
        return None if base is None else base + extra


def declared(name: Optional[str] = None) -> R.TimePolicy:
    """The [policy.time] of this installation's assignment (or of `name` if it is that one), else the
    default; TimeError when it does not read."""
    from grader.core.assignment import Assignment, AssignmentError
    from grader.server.gradebook import declared as declared_assignment

    try:
        name = name or Assignment.option().name
    except AssignmentError:
        return R.TimePolicy()
    raw = declared_assignment.of(name).policy.time
    return R.parse(json.loads(raw), "assignment.toml") if raw else R.TimePolicy()


def _declared_or_default(name: Optional[str] = None) -> R.TimePolicy:
    try:
        return declared(name)
    except R.TimeError as e:
        log.warning("[policy.time] left out: %s", e)
        return R.TimePolicy()


def setting(conn: Connection, name: str) -> Optional[str]:
    return conn.execute(select(settings.c.value).where(settings.c.name == name)).scalar()


def zone(conn: Connection) -> str:
    """The course's zone: set on the server, else declared, else "" (none)."""
    value = setting(conn, ZONE)
    return value if value is not None else _declared_or_default().zone


def late_days(conn: Connection) -> int:
    value = setting(conn, LATE_DAYS)
    return int(value) if value is not None else _declared_or_default().late_days


def rule(conn: Connection, assignment: str) -> R.LateRule:
    value = setting(conn, RULE + assignment)
    if value is not None:
        try:
            return R.parse_rule(json.loads(value), f"server late rule of {assignment}")
        except (R.TimeError, ValueError):
            log.warning("the server's late rule of %s does not read; left out", assignment)
    return _declared_or_default(assignment).rule


def read(conn: Connection, student: Optional[str] = None) -> Clock:
    """Everything in force now (one student's extensions only, with `student`)."""
    found = conn.execute(
        select(assignments.c.name, problems.c.name, problems.c.deadline).join(
            assignments, assignments.c.id == problems.c.assignment_id
        )
    ).all()
    names = {a for a, _, _ in found}
    query = select(
        users.c.name, extensions.c.assignment, extensions.c.question, extensions.c.deadline, extensions.c.extra_seconds
    ).join(users, users.c.id == extensions.c.user_id)
    if student is not None:
        query = query.where(users.c.name == student)
    ext = {(who, a, q): (d, dt.timedelta(seconds=s or 0)) for who, a, q, d, s in conn.execute(query).all()}
    return Clock(
        zone(conn), late_days(conn), {a: rule(conn, a) for a in names}, {f"{a}/{p}": d for a, p, d in found}, ext
    )


def _put(conn: Connection, name: str, value: Optional[str]) -> None:
    conn.execute(delete(settings).where(settings.c.name == name))
    if value is not None:
        conn.execute(insert(settings).values(name=name, value=value))


def set_zone(conn: Connection, value: Optional[str], by: str) -> str:
    """Set (None: clear) the course's zone on the server, logged; the zone in force after."""
    if value is not None:
        R.check_zone(value, "zone")
    before = zone(conn)
    _put(conn, ZONE, value)
    after = zone(conn)
    changes.record(conn, by, "zone", "", "", before or "none", after or "none")
    return after


def set_late_days(conn: Connection, days: Optional[int], by: str) -> int:
    if days is not None and not 0 <= days <= 365:
        raise R.TimeError(f"late days {days}: give a whole number of days, 0-365")
    before = late_days(conn)
    _put(conn, LATE_DAYS, None if days is None else str(days))
    after = late_days(conn)
    changes.record(conn, by, "late days", "", "", str(before), str(after))
    return after


def set_rule(conn: Connection, assignment: str, new: Optional[R.LateRule], by: str) -> R.LateRule:
    before = rule(conn, assignment)
    _put(conn, RULE + assignment, None if new is None else R.rule_json(new))
    after = rule(conn, assignment)
    changes.record(conn, by, "late penalty", assignment, "", before.describe(), after.describe())
    return after
