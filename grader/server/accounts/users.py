"""Users, keys and browser sessions.

Keys are 192 random bits shown once and stored as sha256 only. A browser
session is a random token in a cookie whose sha256 is a row of `sessions`:
every server process accepts it, a restart does not log anyone out, and
signing out deletes the row, so a copied cookie stops working at once.
"""

import datetime as dt
import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from grader.server.store.db import now, sessions, usage, users

from . import identity

ROLES = ("student", "ta", "instructor")  # a TA reads the gradebook and students' pages, and changes nothing
STAFF = ("ta", "instructor")
ACTIVE, REVOKED, REMOVED = "active", "revoked", "removed"
KEY_PREFIX = "mg_"
# How long a server process trusts a key it has looked up; commands that end a key wait
# this long before saying so, so that no process accepts it once they return.
KEY_CACHE_SECONDS = 1.0


class AccountError(ValueError):
    """A bad user name, role or roster; the message names the fix."""


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: str

    @property
    def is_instructor(self) -> bool:
        return self.role == "instructor"

    @property
    def is_staff(self) -> bool:
        """Reads the gradebook and every student's page (instructors and TAs)."""
        return self.role in STAFF


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(24)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def find_user(conn: Connection, key: str):
    row = conn.execute(
        select(users.c.id, users.c.name, users.c.role).where(
            users.c.key_hash == hash_key(key), users.c.status == ACTIVE
        )
    ).first()
    return User(*row) if row else None


def user_by_id(conn: Connection, user_id: int):
    row = conn.execute(
        select(users.c.id, users.c.name, users.c.role).where(users.c.id == user_id, users.c.status == ACTIVE)
    ).first()
    return User(*row) if row else None


def check_person(name: str, role: str, where: str = "", email: Optional[str] = None):
    """AccountError naming the field and fix when a name, role or e-mail cannot be an account's."""
    if not name or len(name) > 200 or name != name.strip() or has_control_characters(name):
        raise AccountError(
            f"{where}name {name!r}: give 1-200 characters without leading/trailing spaces or control characters"
        )
    if role not in ROLES:
        raise AccountError(f"{where}role {role!r}: use one of {', '.join(ROLES)}")
    if email is not None and (len(email) > 200 or not EMAIL.match(email)):
        raise AccountError(f"{where}email {email[:60]!r}: give an address like ada@example.org (or leave it empty)")
    for field, value in (("name", name), ("email", email)):
        problem = value and identity.refused(value)
        if problem:
            raise AccountError(f"{where}{field} {value!r} {problem}; retype it without that character")


EMAIL = re.compile(r"^[^@\s\x00-\x1f]+@[^@\s\x00-\x1f]+$")


def _person(entry) -> tuple:
    """(name, role, email or None) from a (name, role[, email[, student id]]) entry."""
    name, role, *rest = entry
    return name, role, (rest[0] or None) if rest else None


def _student_id(entry) -> Optional[str]:
    return (entry[3] or None) if len(entry) > 3 else None


def check_student_id(value: Optional[str], where: str = "") -> None:
    """A student (SIS) ID: printable, at most 100 characters (None: none)."""
    if value is not None and (len(value) > 100 or not value.strip() or has_control_characters(value)):
        raise AccountError(
            f"{where}student ID {value[:40]!r}: give the ID your school's system (SIS) uses, "
            "printable, at most 100 characters"
        )


def student_ids(conn: Connection) -> dict:
    """Name -> student (SIS) ID of every account that has one."""
    return dict(conn.execute(select(users.c.name, users.c.student_id).where(users.c.student_id.isnot(None))).all())


def add_users(engine: Engine, people) -> list:
    """Create users from (name, role[, email]) entries in one transaction; return their keys."""
    people = [_person(p) for p in people]
    try:
        with engine.begin() as conn:
            keys = insert_users(conn, people)
    except IntegrityError:
        taken = _existing_names(engine, [n for n, _, _ in people], [e for _, _, e in people if e])
        raise AccountError(f"user name or e-mail already exists: {', '.join(taken) or '?'}; pick another") from None
    return keys


def insert_users(conn: Connection, people) -> list:
    """Create users from (name, role[, email]) entries in the caller's transaction; their keys.
    Names and e-mails are stored in NFC; one that is already an account's (ignoring case and
    Unicode form) is refused, naming that account."""
    ids = [_student_id(p) for p in people]
    people = [_person(p) for p in people]
    for (name, role, email), sid in zip(people, ids):
        check_person(name, role, email=email)
        check_student_id(sid)
    _refuse_taken(conn, people)
    people = [(identity.nfc(n), r, identity.nfc(e) if e else None) for n, r, e in people]
    keys = [new_key() for _ in people]
    for (name, role, email), key, sid in zip(people, keys, ids):
        uid = conn.execute(
            insert(users).values(
                name=name, role=role, key_hash=hash_key(key), email=email, student_id=sid, created_at=now()
            )
        ).inserted_primary_key[0]
        # The usage row exists from the start, so that the server only ever updates it.
        conn.execute(insert(usage).values(user_id=uid, stored_bytes=0))
    return keys


def _refuse_taken(conn: Connection, people):
    """AccountError when a new name or e-mail is one of another account, or of another new one
    (compared ignoring case and Unicode form)."""
    taken = {}
    for name, email, status in conn.execute(select(users.c.name, users.c.email, users.c.status)).all():
        whose = f"account {name!r}" + (" (removed: its name is never reused)" if status == REMOVED else "")
        taken.setdefault(("name", identity.key(name)), (name, whose))
        if email:
            taken.setdefault(("email", identity.key(email)), (email, f"{whose} (e-mail {email!r})"))
    for name, _, email in people:
        for field, value in (("name", name), ("email", email)):
            if not value:
                continue
            held, other = taken.get((field, identity.key(value)), (None, None))
            if other:
                how = "" if held == value else " (ignoring case and Unicode form)"
                raise AccountError(
                    f"{field} {value!r} is already {other}{how}; pick another, or leave that person's account as it is"
                )
            taken[(field, identity.key(value))] = (value, f"new account {name!r}")


def accounts(conn: Connection) -> list:
    """(name, email, key_hash, role) of every account."""
    return [tuple(r) for r in conn.execute(select(users.c.name, users.c.email, users.c.key_hash, users.c.role)).all()]


def _existing_names(engine, names, emails=()):
    with engine.connect() as conn:
        taken = {r[0] for r in conn.execute(select(users.c.name).where(users.c.name.in_(names))).all()}
        taken |= {r[0] for r in conn.execute(select(users.c.email).where(users.c.email.in_(list(emails)))).all()}
    return sorted(taken)


def has_control_characters(text: str) -> bool:
    """NUL and other control or unpaired-surrogate characters: PostgreSQL refuses NUL in text,
    and none of them belongs in a name."""
    return any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


# --- sessions -----------------------------------------------------------


def open_session(conn: Connection, user_id: int, hours: float, keep: int) -> str:
    """A new session of `user_id`, ending its oldest beyond `keep`; the token goes in the
    cookie, only its hash in the database."""
    token, t = secrets.token_urlsafe(32), now()
    # Both deletes find their rows by index (sessions' expiry, and key then expiry), never by a scan.
    conn.execute(delete(sessions).where(sessions.c.expires_at < t))  # sweep, so the table stays small
    conn.execute(
        insert(sessions).values(token_hash=hash_key(token), user_id=user_id, expires_at=t + dt.timedelta(hours=hours))
    )
    newest = (
        select(sessions.c.token_hash)
        .where(sessions.c.user_id == user_id)
        .order_by(sessions.c.expires_at.desc())
        .limit(keep)
    )
    conn.execute(delete(sessions).where(sessions.c.user_id == user_id, sessions.c.token_hash.not_in(newest)))
    return token


def session_user(conn: Connection, token: str):
    """The user of a live session token, else None."""
    if not token or len(token) > 100:
        return None
    row = conn.execute(
        select(users.c.id, users.c.name, users.c.role)
        .join(sessions, sessions.c.user_id == users.c.id)
        .where(sessions.c.token_hash == hash_key(token), sessions.c.expires_at > now(), users.c.status == ACTIVE)
    ).first()
    return User(*row) if row else None


def close_session(conn: Connection, token: str):
    conn.execute(delete(sessions).where(sessions.c.token_hash == hash_key(token or "")))
