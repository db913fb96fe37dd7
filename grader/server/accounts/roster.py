"""`grader users import ROSTER`: the accounts brought in line with a class roster.

A roster is a CSV with a `name` column and optional `role`, `email` and
`student_id` (the school's SIS ID, which the Canvas and Moodle exports carry)
columns. Importing it adds the people who have no account, updates the role
and e-mail of those whose roster line differs, leaves the others alone, and
lists the students who have an account but are no longer on the roster,
without removing anyone (`grader users remove NAME` does that). People are
matched by name, ignoring case and Unicode form (identity.py). An empty or
absent role or e-mail cell leaves the account's as it is (a new person is a
student, without e-mail).

Every problem of a roster is reported in one run, one line each, and none
of it is applied; a dry run prints the same changes and applies nothing.
"""

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from grader.server.store.db import users

from . import identity
from .users import ACTIVE, REMOVED, AccountError, check_person, check_student_id, insert_users


class RosterError(AccountError):
    """Everything wrong with a roster: `problems`, one line each, naming line, field and fix."""

    def __init__(self, problems):
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Person:
    line: int
    name: str
    role: Optional[str]  # None: not given
    email: Optional[str]  # None: not given
    student_id: Optional[str] = None  # None: not given


@dataclass(frozen=True)
class Change:
    name: str  # the account's name
    fields: tuple  # (field, old, new)


@dataclass(frozen=True)
class RosterDiff:
    new: tuple  # Person
    changed: tuple  # Change
    unchanged: int
    missing: tuple  # names of active students not on the roster


def read(path: Path) -> tuple:
    """The roster's people, or RosterError listing every bad line."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise RosterError([f"{path}: cannot read roster ({e}); save it as UTF-8 CSV"]) from None
    if not rows or "name" not in rows[0]:
        raise RosterError([f"{path}: needs a header line with a 'name' column (and optionally 'role', 'email')"])
    people, problems, seen = [], [], {}
    for line, row in enumerate(rows, start=2):
        name = (row.get("name") or "").strip()
        role, email = (row.get("role") or "").strip() or None, (row.get("email") or "").strip() or None
        sid = (row.get("student_id") or "").strip() or None
        try:
            check_person(name, role or "student", where=f"{path}:{line}: ", email=email)
            check_student_id(sid, where=f"{path}:{line}: ")
        except AccountError as e:
            problems.append(str(e))
            continue
        first = seen.setdefault(identity.key(name), line)
        if first != line:
            problems.append(
                f"{path}:{line}: name {name!r} appears twice (first on line {first}, ignoring case "
                "and Unicode form); keep one line per person"
            )
            continue
        people.append(Person(line, identity.nfc(name), role, identity.nfc(email) if email else None, sid))
    if problems:
        raise RosterError(problems)
    return tuple(people)


def compare(conn: Connection, people, path: Path) -> RosterDiff:
    """What importing `people` would change, or RosterError listing every conflict."""
    accounts = conn.execute(
        select(users.c.id, users.c.name, users.c.role, users.c.email, users.c.status, users.c.student_id)
    ).all()
    by_name = {identity.key(a.name): a for a in accounts}
    email_owner = {identity.key(a.email): a.name for a in accounts if a.email}
    new, changed, unchanged, problems = [], [], 0, []
    for p in people:
        account, where = by_name.get(identity.key(p.name)), f"{path}:{p.line}: "
        if account is not None and account.status == REMOVED:
            problems.append(
                f"{where}{p.name!r} is a removed account, whose name is never reused; give the person "
                "another name, or leave the line out"
            )
            continue
        mine = account.name if account is not None else p.name
        if p.email and email_owner.setdefault(identity.key(p.email), mine) != mine:
            problems.append(
                f"{where}email {p.email!r} is already {email_owner[identity.key(p.email)]!r}'s; "
                "give each person their own e-mail"
            )
            continue
        if account is None:
            new.append(p)
            continue
        fields = tuple(
            (f, old, value)
            for f, old, value in (
                ("role", account.role, p.role),
                ("email", account.email, p.email),
                ("student_id", account.student_id, p.student_id),
            )
            if value is not None and identity.key(value) != identity.key(old or "")
        )
        if fields:
            changed.append(Change(account.name, fields))
        else:
            unchanged += 1
    if problems:
        raise RosterError(problems)
    listed = {identity.key(p.name) for p in people}
    missing = tuple(
        sorted(
            a.name
            for a in accounts
            if a.role == "student" and a.status == ACTIVE and identity.key(a.name) not in listed
        )
    )
    return RosterDiff(tuple(new), tuple(changed), unchanged, missing)


def apply(conn: Connection, diff: RosterDiff) -> list:
    """Write the diff in the caller's transaction; the new people's keys, in order."""
    for change in diff.changed:
        conn.execute(update(users).where(users.c.name == change.name).values(**{f: v for f, _, v in change.fields}))
    return insert_users(conn, [(p.name, p.role or "student", p.email, p.student_id) for p in diff.new])


def render(diff: RosterDiff, path: Path) -> str:
    """The changes, one line each (pure)."""
    lines = [
        f"{path}: {len(diff.new)} new, {len(diff.changed)} changed, {diff.unchanged} unchanged, "
        f"{len(diff.missing)} not on the roster"
    ]
    lines += [f"  + {p.name} ({p.role or 'student'}{', ' + p.email if p.email else ''})" for p in diff.new]
    lines += [
        f"  ~ {c.name}: " + ", ".join(f"{f} {old or '-'} -> {new}" for f, old, new in c.fields) for c in diff.changed
    ]
    lines += [
        f"  ? {name}: not on the roster; kept (`grader users remove NAME` removes an account)" for name in diff.missing
    ]
    return "\n".join(lines)
