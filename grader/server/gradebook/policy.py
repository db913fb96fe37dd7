"""Which grade counts, per assignment and question: the policy in force.

An assignment declares it once, in its assignment.toml's [policy] table
(grader.core.assignment.Policy); a course may override it on its server
(`grader policy set`), stored as JSON in `settings` under `policy:NAME`,
each change bumping `policy:version` (a results page is reused only while
that is unchanged, freshness.py). Without either, the default: once the
assignment has a sandboxed grade (grade-batch imported, Gradescope), that
is the grade and the server's submit cases are practice; an assignment
graded only through the server gets the server's cases. The better of two
channels only when a policy declares "best of both". "Has a sandboxed grade"
is judged per question: a question the sandbox never grades (a server-only
problem) keeps the server's cases under "auto".
"""

import json

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from grader.core.assignment import AssignmentError, Policy, parse_policy
from grader.server.store.db import assignments, settings

from . import declared

PREFIX = "policy:"
VERSION = "policy:version"
SANDBOXED = "sandboxed"
SERVER = "server"


def overridden(conn: Connection) -> dict:
    """Assignment name -> the Policy its course set on the server (a row that no longer reads: skipped)."""
    out = {}
    for name, value in conn.execute(
        select(settings.c.name, settings.c.value).where(settings.c.name.like(PREFIX + "%"), settings.c.name != VERSION)
    ).all():
        try:
            out[name[len(PREFIX) :]] = parse_policy(json.loads(value), f"server policy of {name[len(PREFIX) :]}")
        except (ValueError, AssignmentError):
            continue
    return out


def in_force(conn: Connection, assignments) -> dict:
    """Assignment name -> its Policy: the server's override, else its assignment.toml's, else the default."""
    found = overridden(conn)
    return {a: found.get(a) or declared.of(a).policy for a in assignments}


def advisory_cases(conn: Connection) -> dict:
    """ "assignment/problem" -> the server case indexes its policy calls advisory (no points)."""
    names = [a for (a,) in conn.execute(select(assignments.c.name)).all()]
    return {
        f"{a}/{key}": frozenset(cases) for a, rules in in_force(conn, names).items() for key, cases in rules.advisory
    }


def set_policy(conn: Connection, assignment: str, policy) -> None:
    """Store (or, with None, remove) the course's override, in the caller's transaction."""
    conn.execute(delete(settings).where(settings.c.name == PREFIX + assignment))
    if policy is not None:
        conn.execute(
            insert(settings).values(name=PREFIX + assignment, value=json.dumps(policy.to_dict(), sort_keys=True))
        )
    version = conn.execute(select(settings.c.value).where(settings.c.name == VERSION)).scalar()
    if version is None:
        conn.execute(insert(settings).values(name=VERSION, value="1"))
    else:
        conn.execute(update(settings).where(settings.c.name == VERSION).values(value=str(int(version) + 1)))


def channel(source: str) -> str:
    """An attempt's channel: "server", or "sandboxed" for an imported result."""
    return SERVER if source == SERVER else SANDBOXED


def counted_channels(counts: str, has_sandboxed: bool) -> tuple:
    """The channels whose attempts count under `counts` (the others are practice)."""
    if counts == "auto":
        return (SANDBOXED,) if has_sandboxed else (SERVER,)
    if counts == "best of both":
        return (SANDBOXED, SERVER)
    return (counts,)


def describe(policy: Policy) -> str:
    """One line per rule, as commands print it."""
    lines = [f"counts: {policy.counts}, pick: {policy.pick}"]
    lines += [f"  {key}: counts: {c}, pick: {p}" for key, c, p in policy.questions]
    return "\n".join(lines)
