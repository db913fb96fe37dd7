"""An account after it is made: listed, its key reissued or revoked, or removed.

- `reissue_key`: a new key (shown once); the old one and its sessions end.
- `revoke`: the key stops working and its sessions end, until a key is
  reissued. The stored hash is replaced by a random one that no key has.
- `remove`: as revoke, for good: the row stays, so the account's
  submissions, results and imports stay in the database and its name (and
  e-mail) are never given to another person; it is listed as removed.

Every change ends the account's sessions in the same transaction, so a
signed-in browser is signed out at once on every server process; a key a
process has just looked up is trusted for at most `users.KEY_CACHE_SECONDS`.
"""

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection

from grader.server.store.db import sessions, users

from . import identity
from .users import ACTIVE, REMOVED, REVOKED, AccountError, hash_key, new_key


@dataclass(frozen=True)
class Listed:
    name: str
    role: str
    email: Optional[str]
    status: str
    created_at: dt.datetime


def listing(conn: Connection) -> tuple:
    """Every account, by role then name (never a key: only hashes are stored)."""
    rows = conn.execute(
        select(users.c.name, users.c.role, users.c.email, users.c.status, users.c.created_at).order_by(
            users.c.role, users.c.name
        )
    ).all()
    return tuple(Listed(*r) for r in rows)


def find(conn: Connection, name: str):
    """(id, name, status) of the account called `name` (ignoring case and Unicode form), else
    AccountError naming the fix."""
    problem = identity.refused(name)
    if problem:
        raise AccountError(f"name {name!r} {problem}; type the name as `grader users list` shows it")
    fits = [
        r
        for r in conn.execute(select(users.c.id, users.c.name, users.c.status)).all()
        if identity.key(r.name) == identity.key(name)
    ]
    if not fits:
        raise AccountError(f"no account named {name!r}; `grader users list` shows every account")
    if len(fits) > 1:
        both = " and ".join(repr(r.name) for r in fits[:2])
        raise AccountError(f"name {name!r} fits {len(fits)} accounts, {both}; give the exact name")
    return fits[0]


def _end(conn: Connection, account_id: int, status: str, key_hash: str):
    conn.execute(update(users).where(users.c.id == account_id).values(status=status, key_hash=key_hash))
    conn.execute(delete(sessions).where(sessions.c.user_id == account_id))


def _unusable_hash() -> str:
    """A stored hash no key has (64 random hex digits, as a sha256 looks)."""
    return secrets.token_hex(32)


def reissue_key(conn: Connection, name: str) -> tuple:
    """(account name, new key): the old key and every session of the account end."""
    account = find(conn, name)
    if account.status == REMOVED:
        raise AccountError(
            f"account {account.name!r} was removed; a removed account gets no key "
            "(add the person again under another name if they return)"
        )
    key = new_key()
    _end(conn, account.id, ACTIVE, hash_key(key))
    return account.name, key


def revoke(conn: Connection, name: str) -> str:
    """The account's name; its key and sessions end until `reissue_key`."""
    account = find(conn, name)
    if account.status == REMOVED:
        raise AccountError(f"account {account.name!r} was removed already; nothing to revoke")
    _end(conn, account.id, REVOKED, _unusable_hash())
    return account.name


def remove(conn: Connection, name: str) -> str:
    """The account's name; it ends for good, its history stays and its name stays taken."""
    account = find(conn, name)
    if account.status == REMOVED:
        raise AccountError(f"account {account.name!r} was removed already")
    _end(conn, account.id, REMOVED, _unusable_hash())
    return account.name
