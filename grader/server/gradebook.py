"""Scores from the database: the class gradebook, one student's view, CSV.

A problem's score is the fraction of its cases correct on the student's best
submission (each submission counts against the publication it started on).
A case is late when it was answered after the deadline (whenever its
submission started); `on_time` is the best score counting on-time answers
only, and a cell is flagged late when late answers raised the score above it.
The total is the weighted mean of problem scores, in percent.
"""
import csv
import io
from dataclasses import dataclass, field
from typing import Optional

from sqlalchemy import case, func, select
from sqlalchemy.engine import Connection

from .db import assignments, case_results, problems, publications, submissions, users

BINS = ("0-19%", "20-39%", "40-59%", "60-79%", "80-99%", "100%")


@dataclass(frozen=True)
class Problem:
    id: int
    label: str  # "assignment/problem"
    weight: float
    num_cases: int


@dataclass(frozen=True)
class Cell:
    score: Optional[float]  # None: never submitted
    correct: int = 0
    total: int = 0
    late: bool = False
    # Best score from on-time answers alone (None: never submitted). Left out of
    # equality: it is derived from the same answers as `late`.
    on_time: Optional[float] = field(default=None, compare=False)


@dataclass(frozen=True)
class Row:
    user_id: int
    name: str
    cells: tuple
    total: float


@dataclass(frozen=True)
class Attempt:
    problem: str
    when: str
    correct: int
    answered: int
    total: int
    late: bool


@dataclass(frozen=True)
class Gradebook:
    problems: tuple
    rows: tuple
    histograms: tuple  # per problem: counts per BINS, then the count never submitted
    pass_rates: tuple  # per problem: tuple of (case index, fraction of submitters passing)


def load_problems(conn: Connection) -> tuple:
    latest = select(publications.c.problem_id, func.max(publications.c.id).label("pid")) \
        .group_by(publications.c.problem_id).subquery()
    rows = conn.execute(
        select(problems.c.id, assignments.c.name, problems.c.name, problems.c.weight, publications.c.num_cases)
        .join(assignments, assignments.c.id == problems.c.assignment_id)
        .join(latest, latest.c.problem_id == problems.c.id)
        .join(publications, publications.c.id == latest.c.pid)
        .order_by(assignments.c.name, problems.c.id)).all()
    return tuple(Problem(r[0], f"{r[1]}/{r[2]}", r[3], r[4]) for r in rows)


def _attempt_rows(conn: Connection, user_id: Optional[int]):
    """Per submission: user, problem, time, late, cases, correct and answered counts."""
    correct = func.coalesce(func.sum(case((case_results.c.correct, 1), else_=0)), 0)
    # A submission started late has only late answers, whatever its rows say.
    in_time = case_results.c.correct & ~case_results.c.late & ~submissions.c.late
    on_time = func.coalesce(func.sum(case((in_time, 1), else_=0)), 0)
    query = (select(submissions.c.id, submissions.c.user_id, submissions.c.problem_id,
                    submissions.c.created_at, submissions.c.late, publications.c.num_cases,
                    correct.label("correct"), func.count(case_results.c.id).label("answered"),
                    on_time.label("on_time"))
             .join(publications, publications.c.id == submissions.c.publication_id)
             .outerjoin(case_results, case_results.c.submission_id == submissions.c.id)
             .group_by(submissions.c.id, submissions.c.user_id, submissions.c.problem_id,
                       submissions.c.created_at, submissions.c.late, publications.c.num_cases)
             .order_by(submissions.c.id))
    if user_id is not None:
        query = query.where(submissions.c.user_id == user_id)
    return conn.execute(query).all()


def _best(attempts) -> Cell:
    if not attempts:
        return Cell(None)
    best = max(attempts, key=lambda a: (a.correct / a.num_cases, a.on_time))
    on_time = max(a.on_time / a.num_cases for a in attempts)
    score = best.correct / best.num_cases
    return Cell(score, best.correct, best.num_cases, late=on_time < score, on_time=on_time)


def build(conn: Connection, user_id: Optional[int] = None) -> Gradebook:
    """The gradebook of every student, or of one user when `user_id` is given."""
    probs = load_problems(conn)
    people = select(users.c.id, users.c.name).order_by(users.c.name)
    people = people.where(users.c.id == user_id) if user_id is not None else \
        people.where(users.c.role == "student")
    by_key = {}
    for a in _attempt_rows(conn, user_id):
        by_key.setdefault((a.user_id, a.problem_id), []).append(a)
    weight = sum(p.weight for p in probs) or 1.0
    rows = []
    for uid, name in conn.execute(people).all():
        cells = tuple(_best(by_key.get((uid, p.id), [])) for p in probs)
        total = 100.0 * sum(p.weight * (c.score or 0.0) for p, c in zip(probs, cells)) / weight
        rows.append(Row(uid, name, cells, round(total, 2)))
    hist = tuple(_histogram([r.cells[i] for r in rows]) for i in range(len(probs)))
    return Gradebook(probs, tuple(rows), hist, _pass_rates(conn, probs))


def _histogram(cells) -> tuple:
    counts = [0] * (len(BINS) + 1)
    for c in cells:
        if c.score is None:
            counts[-1] += 1
        else:
            counts[len(BINS) - 1 if c.score >= 1.0 else min(int(c.score * 5), 4)] += 1
    return tuple(counts)


def _pass_rates(conn: Connection, probs) -> tuple:
    """Per problem and case: the fraction of students who submitted it that ever passed it."""
    students = select(users.c.id).where(users.c.role == "student")
    tried = dict(conn.execute(
        select(submissions.c.problem_id, func.count(func.distinct(submissions.c.user_id)))
        .where(submissions.c.user_id.in_(students)).group_by(submissions.c.problem_id)).all())
    passed = conn.execute(
        select(submissions.c.problem_id, case_results.c.test_case_index,
               func.count(func.distinct(submissions.c.user_id)))
        .join(case_results, case_results.c.submission_id == submissions.c.id)
        .where(case_results.c.correct, submissions.c.user_id.in_(students))
        .group_by(submissions.c.problem_id, case_results.c.test_case_index)).all()
    counts = {(pid, idx): n for pid, idx, n in passed}
    return tuple(tuple((i, counts.get((p.id, i), 0) / tried[p.id] if tried.get(p.id) else None)
                       for i in range(p.num_cases)) for p in probs)


def history(conn: Connection, user_id: int) -> tuple:
    """Every submission of one user, newest first."""
    labels = {p.id: p.label for p in load_problems(conn)}
    return tuple(Attempt(labels.get(a.problem_id, "?"), a.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
                         a.correct, a.answered, a.num_cases, a.late or a.on_time < a.correct)
                 for a in reversed(_attempt_rows(conn, user_id)))


def to_csv(book: Gradebook) -> str:
    """One row per student: name, one score column per problem (percent), total, late problems."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name"] + [p.label for p in book.problems] + ["total", "late"])
    for row in book.rows:
        scores = ["" if c.score is None else f"{100 * c.score:.2f}" for c in row.cells]
        late = " ".join(p.label for p, c in zip(book.problems, row.cells) if c.late)
        writer.writerow([_cell_text(row.name)] + scores + [f"{row.total:.2f}", late])
    return out.getvalue()


def _cell_text(text: str) -> str:
    """Keep spreadsheets from running a name like '=HYPERLINK(...)' as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
