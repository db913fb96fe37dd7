"""What an import changes, decided before anything is written: one `Planned`
per result of the OUTDIR (new, replacing a regraded result, or unchanged),
rendered for `--dry-run` and for the import alike, then stored as planned.

Only the results of the batch's own identity (assignment, batch, student;
see batch_identity.py) are read or replaced. A replaced result's scores go
to `batch_history` first, so a regrade never loses them.
"""

import datetime as dt
import json
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from grader.server.store.records import batch_cases, batch_history, batch_questions, batch_results

from .batch_identity import BatchIdentity

NEW, REPLACED, UNCHANGED = "new", "replaced", "unchanged"
SLACK = 1e-3  # rounding in results.json: scores carry 4 decimals


@dataclass(frozen=True)
class Stored:
    id: int
    batch: str
    digest: str
    score: float
    questions: tuple  # (question, score), sorted


@dataclass(frozen=True)
class Planned:
    result: object  # importer.Imported, named for its student
    action: str  # NEW, REPLACED or UNCHANGED
    old: Optional[Stored]

    @property
    def moved(self) -> tuple:
        """(question, old score or None, new score) of the questions whose score changes."""
        before = dict(self.old.questions) if self.old else {}
        return tuple((k, before.get(k), s) for k, s, _ in self.result.questions if before.get(k) != s)

    @property
    def rescored(self) -> bool:
        return self.old is None or abs(self.old.score - self.result.score) > SLACK or bool(self.moved)


def _stored(conn: Connection, who: BatchIdentity) -> dict:
    """student -> Stored, of this identity's results (a legacy result only where no current one is)."""
    rows = conn.execute(
        select(
            batch_results.c.id,
            batch_results.c.name,
            batch_results.c.batch,
            batch_results.c.digest,
            batch_results.c.score,
        ).where(batch_results.c.assignment == who.assignment, batch_results.c.batch.in_([who.batch, who.legacy]))
    ).all()
    scores = {}
    if rows:
        for rid, question, score in conn.execute(
            select(batch_questions.c.result_id, batch_questions.c.question, batch_questions.c.score).where(
                batch_questions.c.result_id.in_([r.id for r in rows])
            )
        ).all():
            scores.setdefault(rid, []).append((question, score))
    out = {}
    for r in sorted(rows, key=lambda r: r.batch == who.batch):  # the current batch's row wins
        out[r.name] = Stored(r.id, r.batch, r.digest, r.score, tuple(sorted(scores.get(r.id, ()))))
    return out


def plan(conn: Connection, who: BatchIdentity, results: list) -> tuple:
    """One Planned per result, nothing written."""
    stored, out = _stored(conn, who), []
    for r in results:
        old = stored.get(r.name)
        action = NEW if old is None else UNCHANGED if old.digest == r.digest else REPLACED
        out.append(Planned(r, action, old))
    return tuple(out)


def _points(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def counts(planned) -> dict:
    return {action: sum(p.action == action for p in planned) for action in (NEW, REPLACED, UNCHANGED)}


def render(who: BatchIdentity, planned) -> str:
    """What the import changes, per student (pure): the same text for a dry run and an import."""
    n = counts(planned)
    lines = [
        f"assignment '{who.assignment}', batch '{who.label}' (graded from {who.graded_from}): "
        f"{n[NEW]} new, {n[REPLACED]} replaced, {n[UNCHANGED]} unchanged"
    ]
    rescored = sorted((p for p in planned if p.action != UNCHANGED and p.rescored), key=lambda p: p.result.name)
    if rescored:
        width = max(len(p.result.name) for p in rescored)
        lines.append(f"{len(rescored)} student(s) with new scores (old -> new):")
        for p in rescored:
            detail = ", ".join(f"{k} {_points(a)} -> {_points(b)}" for k, a, b in p.moved)
            old = p.old.score if p.old else None
            lines.append(
                f"  {p.result.name:<{width}}  {_points(old):>6} -> {_points(p.result.score):<6}"
                f"{'  (new)' if old is None else f'  ({detail})' if detail else ''}"
            )
    same = sorted(p.result.name for p in planned if p.action == REPLACED and not p.rescored)
    if same:
        lines.append(f"{len(same)} regraded result(s) with the same scores: {', '.join(same)}")
    if not rescored and not same:
        lines.append("no score changes")
    return "\n".join(lines)


def _archive(conn: Connection, old_id: int, now: dt.datetime) -> None:
    """Keep a replaced result's scores in batch_history."""
    row = conn.execute(select(batch_results).where(batch_results.c.id == old_id)).one()
    questions = {
        q: [s, m]
        for q, s, m in conn.execute(
            select(batch_questions.c.question, batch_questions.c.score, batch_questions.c.max_score).where(
                batch_questions.c.result_id == old_id
            )
        ).all()
    }
    conn.execute(
        insert(batch_history).values(
            source=row.source,
            batch=row.batch,
            name=row.name,
            assignment=row.assignment,
            digest=row.digest,
            graded_at=row.graded_at,
            imported_at=row.imported_at,
            replaced_at=now,
            score=row.score,
            questions=json.dumps(questions, sort_keys=True),
        )
    )


def _remove(conn: Connection, result_id: int):
    conn.execute(delete(batch_cases).where(batch_cases.c.result_id == result_id))
    conn.execute(delete(batch_questions).where(batch_questions.c.result_id == result_id))
    conn.execute(delete(batch_results).where(batch_results.c.id == result_id))


def _add(conn: Connection, who: BatchIdentity, r, now: dt.datetime):
    rid = conn.execute(
        insert(batch_results).values(
            source=who.label,
            batch=who.batch,
            name=r.name,
            assignment=who.assignment,
            digest=r.digest,
            graded_at=r.graded_at,
            imported_at=now,
            score=r.score,
            output=r.output,
            status=r.status,
            reason=r.reason,
        )
    ).inserted_primary_key[0]
    conn.execute(
        insert(batch_questions),
        [{"result_id": rid, "question": k, "score": s, "max_score": m} for k, s, m in r.questions],
    )
    if r.cases:
        conn.execute(
            insert(batch_cases),
            [
                {
                    "result_id": rid,
                    "position": i,
                    "question": c.question,
                    "name": c.name,
                    "number": c.number,
                    "score": c.score,
                    "max_score": c.max_score,
                    "passed": c.passed,
                    "hidden": c.hidden,
                    "output": c.output,
                }
                for i, c in enumerate(r.cases)
            ],
        )


def store(conn: Connection, who: BatchIdentity, planned, now: dt.datetime) -> None:
    """Write the plan in the caller's transaction."""
    for p in planned:
        if p.action == UNCHANGED:
            if p.old.batch != who.batch:  # a legacy result, taken over by its batch
                conn.execute(update(batch_results).where(batch_results.c.id == p.old.id).values(batch=who.batch))
            continue
        if p.action == REPLACED:
            _archive(conn, p.old.id, now)
            _remove(conn, p.old.id)
        _add(conn, who, p.result, now)
