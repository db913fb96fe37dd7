"""Protocol data: publications, submissions, case results.

Reads that the hot path needs return frozen records that never change
(rows are append-only), so `Caches` may keep them. Writes are functions of a
connection, run by the group-commit `Writer`; expected outcomes (unknown
problem, a case answered twice with different values) are return values,
not exceptions, so they never force the writer to split its group.
"""
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection

from . import values
from .db import assignments, case_results, now, problems, publications, submissions


@dataclass(frozen=True)
class Publication:
    id: int
    rtol: float
    atol: float
    expected: tuple


@dataclass(frozen=True)
class Submission:
    id: int
    user_id: int
    publication_id: int
    num_cases: int
    late: bool


@dataclass(frozen=True)
class CaseRecord:
    correct: bool
    conflict: bool = False  # the case was already answered with another value


def load_submission(conn: Connection, submission_id: int) -> Optional[Submission]:
    row = conn.execute(
        select(submissions.c.id, submissions.c.user_id, submissions.c.publication_id,
               publications.c.num_cases, submissions.c.late)
        .join(publications, publications.c.id == submissions.c.publication_id)
        .where(submissions.c.id == submission_id)).first()
    return Submission(*row) if row else None


def publication_row(conn: Connection, publication_id: int):
    return conn.execute(select(publications.c.id, publications.c.rtol, publications.c.atol,
                               publications.c.values_json)
                        .where(publications.c.id == publication_id)).one()


def decode_publication(row) -> Publication:
    """Decode outside any database connection: it is CPU work and can be large."""
    # Published by an instructor and checked then; decode with generous limits.
    raw = json.loads(row.values_json)
    expected = tuple(values.decode(v, 10_000, 10**12) for v in raw)
    return Publication(row.id, row.rtol, row.atol, expected)


def _get_or_create(conn, table, where: dict, extra: dict = None):
    cond = [table.c[k] == v for k, v in where.items()]
    row = conn.execute(select(table.c.id).where(*cond)).first()
    if row:
        return row[0]
    return conn.execute(insert(table).values(**where, **(extra or {}))).inserted_primary_key[0]


def publish_job(assignment: str, problem: str, user_id: int, raw_values: list,
                rtol: float, atol: float, weight: Optional[float], deadline):
    """Write: a new publication of `problem` (creating assignment and problem as needed)."""
    def job(conn: Connection) -> int:
        aid = _get_or_create(conn, assignments, {"name": assignment})
        if deadline is not None:
            conn.execute(update(assignments).where(assignments.c.id == aid).values(deadline=deadline))
        pid = _get_or_create(conn, problems, {"assignment_id": aid, "name": problem},
                             {"weight": 1.0 if weight is None else weight})
        if weight is not None:
            conn.execute(update(problems).where(problems.c.id == pid).values(weight=weight))
        return conn.execute(insert(publications).values(
            problem_id=pid, published_by=user_id, created_at=now(), rtol=rtol, atol=atol,
            num_cases=len(raw_values), values_json=json.dumps(raw_values))).inserted_primary_key[0]
    return job


def submission_job(assignment: str, problem: str, user_id: int):
    """Write: a submission against the problem's latest publication; None if unpublished."""
    def job(conn: Connection) -> Optional[Submission]:
        row = conn.execute(
            select(problems.c.id, assignments.c.deadline)
            .join(assignments, assignments.c.id == problems.c.assignment_id)
            .where(assignments.c.name == assignment, problems.c.name == problem)).first()
        pub = row and conn.execute(select(publications.c.id, publications.c.num_cases)
                                   .where(publications.c.problem_id == row.id)
                                   .order_by(publications.c.id.desc()).limit(1)).first()
        if not pub:
            return None
        created = now()
        late = row.deadline is not None and created > row.deadline
        sid = conn.execute(insert(submissions).values(
            user_id=user_id, problem_id=row.id, publication_id=pub.id, created_at=created,
            late=late)).inserted_primary_key[0]
        return Submission(sid, user_id, pub.id, pub.num_cases, late)
    return job


@dataclass(frozen=True)
class CaseWrite:
    submission_id: int
    index: int
    correct: bool
    sha256: str
    value_json: Optional[str]  # None when too large to keep


def insert_cases(conn: Connection, writes: list) -> list:
    """Bulk write (see `Writer.run_bulk`): one CaseRecord per CaseWrite, in order.

    Resending the same value for a case is answered from the stored result (a
    client retry after a lost response); a different value for an answered
    case is a conflict, so a case cannot be guessed twice in one submission.
    """
    sids, indexes = {w.submission_id for w in writes}, {w.index for w in writes}
    known = {(r.submission_id, r.test_case_index): (bool(r.correct), r.value_sha256) for r in conn.execute(
        select(case_results.c.submission_id, case_results.c.test_case_index, case_results.c.correct,
               case_results.c.value_sha256)
        .where(case_results.c.submission_id.in_(sids), case_results.c.test_case_index.in_(indexes)))}
    records, rows, created = [], [], now()
    for w in writes:
        old = known.get((w.submission_id, w.index))
        if old is not None:
            records.append(CaseRecord(old[0]) if old[1] == w.sha256 else CaseRecord(False, True))
            continue
        known[(w.submission_id, w.index)] = (w.correct, w.sha256)  # a duplicate later in this group
        rows.append({"submission_id": w.submission_id, "test_case_index": w.index, "correct": w.correct,
                     "value_sha256": w.sha256, "value_json": w.value_json, "created_at": created})
        records.append(CaseRecord(w.correct))
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
