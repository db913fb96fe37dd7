"""Users, keys and browser sessions.

Keys are 192 random bits shown once and stored as sha256 only. A browser
session is a signed cookie `user_id.expiry.signature`, HMAC-SHA256 with a
secret kept in the database, so every server process accepts it and a
restart does not log anyone out.
"""
import csv
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from .db import now, settings, users

ROLES = ("student", "instructor")
KEY_PREFIX = "mg_"


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


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(24)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def find_user(conn: Connection, key: str):
    row = conn.execute(select(users.c.id, users.c.name, users.c.role)
                       .where(users.c.key_hash == hash_key(key))).first()
    return User(*row) if row else None


def user_by_id(conn: Connection, user_id: int):
    row = conn.execute(select(users.c.id, users.c.name, users.c.role)
                       .where(users.c.id == user_id)).first()
    return User(*row) if row else None


def _check(name: str, role: str, where: str = ""):
    if not name or len(name) > 200 or name != name.strip():
        raise AccountError(f"{where}name {name!r}: give 1-200 characters without leading/trailing spaces")
    if role not in ROLES:
        raise AccountError(f"{where}role {role!r}: use one of {', '.join(ROLES)}")


def add_users(engine: Engine, people) -> list:
    """Create users from (name, role) pairs in one transaction; return their keys."""
    people = list(people)
    for name, role in people:
        _check(name, role)
    keys = [new_key() for _ in people]
    try:
        with engine.begin() as conn:
            for (name, role), key in zip(people, keys):
                conn.execute(insert(users).values(name=name, role=role, key_hash=hash_key(key),
                                                  created_at=now()))
    except IntegrityError:
        taken = _existing_names(engine, [n for n, _ in people])
        raise AccountError(f"user name already exists: {', '.join(taken) or '?'}; pick another name") from None
    return keys


def _existing_names(engine, names):
    with engine.connect() as conn:
        rows = conn.execute(select(users.c.name).where(users.c.name.in_(names))).all()
    return sorted(r[0] for r in rows)


def read_roster(path: Path) -> list:
    """(name, role) pairs from a CSV with a `name` column and an optional `role` column."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise AccountError(f"{path}: cannot read roster ({e})") from None
    if not rows or "name" not in rows[0]:
        raise AccountError(f"{path}: needs a header line with a 'name' column (and optionally 'role')")
    people, seen = [], set()
    for line, row in enumerate(rows, start=2):
        name, role = (row.get("name") or "").strip(), (row.get("role") or "student").strip()
        _check(name, role, where=f"{path}:{line}: ")
        if name in seen:
            raise AccountError(f"{path}:{line}: name {name!r} appears twice")
        seen.add(name)
        people.append((name, role))
    return people


# --- sessions -----------------------------------------------------------

def session_secret(engine: Engine) -> bytes:
    """The cookie signing secret, created once and shared by every server process."""
    with engine.begin() as conn:
        row = conn.execute(select(settings.c.value).where(settings.c.name == "session_secret")).first()
        if row:
            return bytes.fromhex(row[0])
        try:
            conn.execute(insert(settings).values(name="session_secret", value=secrets.token_hex(32)))
        except IntegrityError:  # another process won the race; use its secret
            pass
    return session_secret(engine)


def make_session(secret: bytes, user_id: int, hours: float) -> str:
    payload = f"{user_id}.{int(time.time() + hours * 3600)}"
    return f"{payload}.{_sign(secret, payload)}"


def read_session(secret: bytes, cookie: str):
    """The user id of a valid, unexpired cookie, else None."""
    parts = (cookie or "").split(".")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    payload = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(parts[2], _sign(secret, payload)) or int(parts[1]) < time.time():
        return None
    return int(parts[0])


def _sign(secret: bytes, payload: str) -> str:
    return hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()
