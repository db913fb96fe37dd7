"""Protocol data: publications, submissions, case results.

Reads the hot path needs return frozen records (rows are append-only), so
`Caches` may keep them. Writes are functions of a connection, run by the
group-commit `Writer`; expected outcomes (an unknown problem, a case answered
twice with different values) are return values, never exceptions, so they
never force the writer to split its group."""

import datetime as dt
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import insert, select, text, update
from sqlalchemy.engine import Connection

from grader.server.answers import values

from .db import assignments, case_results, now, problems, publications, submissions, usage

ROW_BYTES = 100  # what a stored row costs a key's quota besides its value (indexes, row headers)
OVER_QUOTA = "over quota"  # submission_job's answer when the key's storage is used up


@dataclass(frozen=True)
class Publication:
    id: int
    rtol: float
    atol: float
    expected: tuple
    encoded_bytes: tuple = ()  # per case: the size of the published answer's JSON

    def answer_limit(self, index: int, factor: float, floor: int, ceiling: int) -> int:
        """The most bytes an answer to case `index` may have (see ServerConfig.answer_bytes_factor)."""
        published = self.encoded_bytes[index] if index < len(self.encoded_bytes) else ceiling
        return min(ceiling, max(floor, int(factor * published)))


@dataclass(frozen=True)
class Submission:
    id: int
    user_id: int
    publication_id: int
    num_cases: int
    late: bool
    # The question's deadline when the submission started (None: none). For the answer
    # to /submit only: a cached Submission may outlive a change of deadline.
    deadline: Optional[dt.datetime] = None


@dataclass(frozen=True)
class CaseRecord:
    correct: bool
    conflict: bool = False  # the case was already answered with another value
    over_quota: bool = False  # not stored: the key's storage quota is used up
    late: bool = False
    deadline: Optional[dt.datetime] = None  # the question's deadline when the case was answered


def load_submission(conn: Connection, submission_id: int) -> Optional[Submission]:
    row = conn.execute(
        select(
            submissions.c.id,
            submissions.c.user_id,
            submissions.c.publication_id,
            publications.c.num_cases,
            submissions.c.late,
        )
        .join(publications, publications.c.id == submissions.c.publication_id)
        .where(submissions.c.id == submission_id)
    ).first()
    return Submission(*row) if row else None


def publication_row(conn: Connection, publication_id: int):
    return conn.execute(
        select(publications.c.id, publications.c.rtol, publications.c.atol, publications.c.values_json).where(
            publications.c.id == publication_id
        )
    ).one()


def decode_publication(row) -> Publication:
    """Decode outside any database connection: it is CPU work and can be large."""
    # Published by an instructor and checked then; decode with generous limits.
    raw = json.loads(row.values_json)
    expected = tuple(values.decode(v, 10_000, 10**12) for v in raw)
    sizes = tuple(len(json.dumps(v).encode()) for v in raw)
    return Publication(row.id, row.rtol, row.atol, expected, sizes)


def _get_or_create(conn, table, where: dict, extra: dict = None):
    cond = [table.c[k] == v for k, v in where.items()]
    row = conn.execute(select(table.c.id).where(*cond)).first()
    if row:
        return row[0]
    return conn.execute(insert(table).values(**where, **(extra or {}))).inserted_primary_key[0]


def publish_job(
    assignment: str,
    problem: str,
    user_id: int,
    raw_values: list,
    rtol: float,
    atol: float,
    weight: Optional[float],
    deadline,
):
    """Write: a new publication of `problem` (creating assignment and problem as needed);
    `weight` and `deadline`, when given, are set on this problem alone."""

    def job(conn: Connection) -> int:
        aid = _get_or_create(conn, assignments, {"name": assignment})
        pid = _get_or_create(
            conn, problems, {"assignment_id": aid, "name": problem}, {"weight": 1.0 if weight is None else weight}
        )
        changed = {k: v for k, v in (("weight", weight), ("deadline", deadline)) if v is not None}
        if changed:  # the problem's own: other questions keep their weights and deadlines
            conn.execute(update(problems).where(problems.c.id == pid).values(**changed))
        return conn.execute(
            insert(publications).values(
                problem_id=pid,
                published_by=user_id,
                created_at=now(),
                rtol=rtol,
                atol=atol,
                num_cases=len(raw_values),
                values_json=json.dumps(raw_values),
            )
        ).inserted_primary_key[0]

    return job


def charge(conn: Connection, user_id: int, nbytes: int, quota: int) -> bool:
    """Add `nbytes` to the key's stored bytes if that stays within `quota` (0: no quota)."""
    if quota <= 0:
        return True
    return user_id in charge_many(conn, {user_id: (nbytes, quota)})


def charge_many(conn: Connection, wanted: dict) -> set:
    """Charge each key {user id: (bytes, quota)} if it stays within its quota; the ids charged.

    A conditional UPDATE, so the quota holds across server processes. On
    SQLite it runs in the caller's transaction (one writer at a time anyway).
    On PostgreSQL it is one statement for the whole group, committed on its
    own: a usage row is then locked for that statement only, not for the
    writer's whole group, so the groups of several processes do not wait for
    each other (nor deadlock). The price: a group that fails after this step
    leaves its keys charged for rows never stored, which errs towards the limit.
    """
    if conn.dialect.name != "postgresql":
        return {uid for uid, (n, q) in sorted(wanted.items()) if _charge_here(conn, uid, n, q)}
    rows = ", ".join(
        f"(CAST(:u{i} AS INTEGER), CAST(:n{i} AS BIGINT), CAST(:q{i} AS BIGINT))" for i in range(len(wanted))
    )
    params = {}
    for i, (uid, (n, q)) in enumerate(sorted(wanted.items())):
        params.update({f"u{i}": uid, f"n{i}": n, f"q{i}": q})
    sql = text(
        f"UPDATE usage SET stored_bytes = usage.stored_bytes + v.n FROM (VALUES {rows}) AS v(uid, n, q) "
        "WHERE usage.user_id = v.uid AND usage.stored_bytes + v.n <= v.q RETURNING usage.user_id"
    )
    with conn.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as own:
        return {r[0] for r in own.execute(sql, params)}


def _charge_here(conn: Connection, user_id: int, nbytes: int, quota: int) -> bool:
    grow = (
        update(usage)
        .where(usage.c.user_id == user_id, usage.c.stored_bytes + nbytes <= quota)
        .values(stored_bytes=usage.c.stored_bytes + nbytes)
    )
    if conn.execute(grow).rowcount:
        return True
    if conn.execute(select(usage.c.user_id).where(usage.c.user_id == user_id)).first() or nbytes > quota:
        return False
    conn.execute(insert(usage).values(user_id=user_id, stored_bytes=nbytes))  # a key made before quotas
    return True


def stored_bytes(conn: Connection, user_id: int) -> int:
    row = conn.execute(select(usage.c.stored_bytes).where(usage.c.user_id == user_id)).first()
    return row[0] if row else 0


def submission_job(assignment: str, problem: str, user_id: int, quota: int = 0):
    """Write: a submission against the problem's latest publication; None if
    unpublished, OVER_QUOTA when the key may store nothing more."""

    def job(conn: Connection):
        row = conn.execute(
            select(problems.c.id, problems.c.deadline)
            .join(assignments, assignments.c.id == problems.c.assignment_id)
            .where(assignments.c.name == assignment, problems.c.name == problem)
        ).first()
        pub = (
            row
            and conn.execute(
                select(publications.c.id, publications.c.num_cases)
                .where(publications.c.problem_id == row.id)
                .order_by(publications.c.id.desc())
                .limit(1)
            ).first()
        )
        if not pub:
            return None
        if not charge(conn, user_id, ROW_BYTES, quota):
            return OVER_QUOTA
        created = now()
        late = row.deadline is not None and created > row.deadline
        sid = conn.execute(
            insert(submissions).values(
                user_id=user_id, problem_id=row.id, publication_id=pub.id, created_at=created, late=late
            )
        ).inserted_primary_key[0]
        return Submission(sid, user_id, pub.id, pub.num_cases, late, row.deadline)

    return job


@dataclass(frozen=True)
class CaseWrite:
    submission_id: int
    index: int
    correct: bool
    sha256: str
    value_json: Optional[str]  # None when too large to keep
    user_id: int = 0
    quota: int = 0  # the key's storage quota in bytes, 0 for none
    reason: Optional[str] = None  # why the value is wrong ("" when right); None: left for a page to judge once

    @property
    def cost(self) -> int:
        return ROW_BYTES + len((self.value_json or "").encode("utf-8"))  # bytes stored, not characters


def _deadlines(conn: Connection, sids) -> dict:
    """submission id -> its question's deadline now (None: no deadline)."""
    return dict(
        conn.execute(
            select(submissions.c.id, problems.c.deadline)
            .join(problems, problems.c.id == submissions.c.problem_id)
            .where(submissions.c.id.in_(sids))
        ).all()
    )


def _charge_all(conn: Connection, fresh: list) -> set:
    """Charge each key for its new rows; the ids (in `fresh`) of writes refused for quota.

    A key's writes in one group are charged together; only when they do not
    all fit are they charged one by one, in order.
    """
    by_user = {}
    for w in fresh:
        if w.quota > 0:
            by_user.setdefault(w.user_id, []).append(w)
    if not by_user:
        return set()
    charged = charge_many(conn, {uid: (sum(w.cost for w in ws), ws[0].quota) for uid, ws in by_user.items()})
    refused = set()
    for uid in sorted(set(by_user) - charged):
        refused.update(id(w) for w in by_user[uid] if not charge(conn, uid, w.cost, w.quota))
    return refused


def insert_cases(conn: Connection, writes: list) -> list:
    """Bulk write (see `Writer.run_bulk`): one CaseRecord per CaseWrite, in order.

    Resending the same value for a case is answered from the stored result (a
    client retry after a lost response); a different value for an answered
    case is a conflict, so a case cannot be guessed twice in one submission.
    A case is late when answered after its question's deadline.
    """
    sids, indexes = {w.submission_id for w in writes}, {w.index for w in writes}
    known = {
        (r.submission_id, r.test_case_index): (bool(r.correct), r.value_sha256, bool(r.late))
        for r in conn.execute(
            select(
                case_results.c.submission_id,
                case_results.c.test_case_index,
                case_results.c.correct,
                case_results.c.value_sha256,
                case_results.c.late,
            ).where(case_results.c.submission_id.in_(sids), case_results.c.test_case_index.in_(indexes))
        )
    }
    fresh, seen = [], set(known)
    for w in writes:
        if (w.submission_id, w.index) not in seen:
            seen.add((w.submission_id, w.index))
            fresh.append(w)
    refused = _charge_all(conn, fresh)
    deadlines, created = _deadlines(conn, sids), now()
    records, rows, blocked = [], [], set()
    for w in writes:
        old = known.get((w.submission_id, w.index))
        if old is not None:
            records.append(
                CaseRecord(old[0], late=old[2], deadline=deadlines.get(w.submission_id))
                if old[1] == w.sha256
                else CaseRecord(False, True)
            )
            continue
        if id(w) in refused or (w.submission_id, w.index) in blocked:
            blocked.add((w.submission_id, w.index))  # a resend later in this group is refused too
            records.append(CaseRecord(False, over_quota=True))
            continue
        due = deadlines.get(w.submission_id)
        late = due is not None and created > due
        known[(w.submission_id, w.index)] = (w.correct, w.sha256, late)  # a duplicate later in this group
        rows.append(
            {
                "submission_id": w.submission_id,
                "test_case_index": w.index,
                "correct": w.correct,
                "value_sha256": w.sha256,
                "value_json": w.value_json,
                "created_at": created,
                "late": late,
                "reason": w.reason,
            }
        )
        records.append(CaseRecord(w.correct, late=late, deadline=due))
    if rows:
        conn.execute(insert(case_results), rows)
    return records


class LRU:
    """A small bounded cache for immutable records."""

    def __init__(self, size: int):
        self._size, self._items = size, OrderedDict()

    def get(self, key):
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key, item):
        self._items[key] = item
        self._items.move_to_end(key)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
