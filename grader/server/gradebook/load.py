"""The gradebook's queries: server submissions and imported grade-batch
results read into the same plain records (`scores.py` does the arithmetic).

A question is "assignment/problem": the server's problem `forward` of `hw1`
and an imported result's question `forward` (imported as assignment hw1)
are the same column, since the grader's question keys are the problem names
students submit under.
"""

import datetime as dt
import json
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import and_, case, func, or_, select, true
from sqlalchemy.engine import Connection

from grader.server.gradebook.timing import clock, judge
from grader.server.store.db import assignments, case_results, problems, publications, submissions, users
from grader.server.store.records import batch_cases, batch_history, batch_questions, batch_results
from grader.server.store.timetables import verdicts

from . import declared, policy


@dataclass(frozen=True)
class Column:
    """A gradebook column: one question (server problem or imported) of one assignment."""

    label: str  # "assignment/problem"
    assignment: str
    weight: float  # the server problem's weight, else the imported max_score
    num_cases: int  # server cases of the latest publication (0: imported only)
    deadline: Optional[dt.datetime]  # the server problem's own deadline (None: none, or imported only)


@dataclass(frozen=True)
class Attempt:
    """One submission of one question: a server submission, or one question of an imported result."""

    key: str  # "s<submission id>" or "b<result id>"
    student: str
    question: str  # label
    source: str  # "server" or "batch <label>"
    when: dt.datetime  # submitted (server) or graded (imported), naive UTC
    score: float  # 0..1
    correct: int
    total: int
    late: bool  # started late, or late answers raised its score
    publication_id: int = 0  # server submissions only
    on_time: float = 0.0  # 0..1 counting on-time answers only
    previous: Optional[float] = None  # 0..1 before a regrade (an import, or a republish re-judging) changed it
    attention: str = ""  # imported only: why the grader could not grade it ("": graded)
    # Server only: (arrival, right answers now, right answers as first judged) per arrival time;
    # lateness, penalty and late days are judged from them and the clock in force (timing.judge).
    arrivals: tuple = ()
    due: Optional[dt.datetime] = None  # the deadline in force it was judged against (late days included)
    penalty: float = 0.0  # 0..1 the late rule took
    late_days: int = 0  # late days spent on its question


def questions(conn: Connection) -> tuple:
    latest = (
        select(publications.c.problem_id, func.max(publications.c.id).label("pid"))
        .group_by(publications.c.problem_id)
        .subquery()
    )
    rows = conn.execute(
        select(assignments.c.name, problems.c.name, problems.c.weight, publications.c.num_cases, problems.c.deadline)
        .join(assignments, assignments.c.id == problems.c.assignment_id)
        .join(latest, latest.c.problem_id == problems.c.id)
        .join(publications, publications.c.id == latest.c.pid)
    ).all()
    found = {f"{a}/{p}": Column(f"{a}/{p}", a, w, n, d) for a, p, w, n, d in rows}
    for a, q, top in conn.execute(
        select(batch_results.c.assignment, batch_questions.c.question, func.max(batch_questions.c.max_score))
        .join(batch_results, batch_results.c.id == batch_questions.c.result_id)
        .group_by(batch_results.c.assignment, batch_questions.c.question)
    ).all():
        found.setdefault(f"{a}/{q}", Column(f"{a}/{q}", a, top, 0, None))
    return tuple(sorted(found.values(), key=lambda q: question_order(q.label)))


def question_order(label: str):
    """By assignment; its declared questions in the handout's order, others by name."""
    assignment, _, name = label.partition("/")
    keys = list(declared.of(assignment).questions)
    return (assignment, keys.index(name), "") if name in keys else (assignment, len(keys), name)


def sandboxed_questions(conn: Connection) -> frozenset:
    """The questions ("assignment/key") with an imported (sandboxed) result of anyone: under the
    default policy their sandboxed grade counts and the server's cases are practice (a question
    the sandbox never grades keeps the server's cases)."""
    return frozenset(
        f"{a}/{q}"
        for a, q in conn.execute(
            select(batch_results.c.assignment, batch_questions.c.question)
            .distinct()
            .join(batch_questions, batch_questions.c.result_id == batch_results.c.id)
        ).all()
    )


def students(conn: Connection) -> dict:
    """Name -> user id of every student account (imported names without an account map to None)."""
    found = dict(conn.execute(select(users.c.name, users.c.id).where(users.c.role == "student")).all())
    for (name,) in conn.execute(select(batch_results.c.name).distinct()).all():
        found.setdefault(name, None)
    return found


def attempts(conn: Connection, student: Optional[str] = None, advisory: Optional[dict] = None) -> list:
    """Server and imported attempts of every student, or of the one named `student`: read once
    per page and handed to both the scores and the submission details. Server attempts are
    judged against the deadlines, extensions, late rule and late days in force now."""
    found = server_attempts(conn, student, advisory) + batch_attempts(conn, student)
    rules = policy.in_force(conn, {a.question.partition("/")[0] for a in found})
    sandboxed = sandboxed_questions(conn)

    def counts_server(label):
        assignment, _, key = label.partition("/")
        return policy.SERVER in policy.counted_channels(rules[assignment].of(key)[0], label in sandboxed)

    return judge.judge(found, clock.read(conn, student), counts_server)


def verdict_in_force():
    """(correct, reason) columns of a case result's verdict in force: its newest re-judging
    (a republish, timing/regrade.py), else its first; the joins to add with `join_verdicts`."""
    latest = (
        select(verdicts.c.case_result_id, func.max(verdicts.c.id).label("vid"))
        .group_by(verdicts.c.case_result_id)
        .subquery()
    )
    now = verdicts.alias("verdict_now")
    return (
        func.coalesce(now.c.correct, case_results.c.correct),
        func.coalesce(now.c.reason, case_results.c.reason),
        lambda query: query.outerjoin(latest, latest.c.case_result_id == case_results.c.id).outerjoin(
            now, now.c.id == latest.c.vid
        ),
    )


def _scored(advisory: dict):
    """A condition true for a case result that earns points: not one of `advisory`'s
    ("assignment/problem" -> server case indexes the grader calls advisory)."""
    rules = [
        and_(
            assignments.c.name == label.partition("/")[0],
            problems.c.name == label.partition("/")[2],
            case_results.c.test_case_index.in_(sorted(idx)),
        )
        for label, idx in advisory.items()
        if idx
    ]
    return ~or_(*rules) if rules else true()


def server_attempts(conn: Connection, student: Optional[str] = None, advisory: Optional[dict] = None) -> list:
    """Each submission with its right answers counted per arrival time (its verdicts in force);
    `timing.judge` then derives lateness per answer. A case `advisory` names (label -> indexes)
    is left out of both the cases right and the cases counted."""
    advisory = advisory or {}
    scored = _scored(advisory)
    correct_now, _, join_verdicts = verdict_in_force()
    right_now = func.coalesce(func.sum(case((and_(correct_now, scored), 1), else_=0)), 0)
    right_then = func.coalesce(func.sum(case((and_(case_results.c.correct, scored), 1), else_=0)), 0)
    keys = (
        submissions.c.id,
        users.c.name,
        assignments.c.name,
        problems.c.name,
        submissions.c.created_at,
        publications.c.num_cases,
        submissions.c.publication_id,
        case_results.c.created_at,
    )
    query = (
        join_verdicts(
            select(*keys, right_now, right_then)
            .select_from(submissions)
            .join(users, users.c.id == submissions.c.user_id)
            .join(problems, problems.c.id == submissions.c.problem_id)
            .join(assignments, assignments.c.id == problems.c.assignment_id)
            .join(publications, publications.c.id == submissions.c.publication_id)
            .outerjoin(case_results, case_results.c.submission_id == submissions.c.id)
        )
        .where(users.c.role == "student" if student is None else users.c.name == student)
        .group_by(*keys)
        .order_by(submissions.c.id, case_results.c.created_at)
    )
    grouped = {}
    for sid, who, a, p, when, n, pid, arrived, now, then in conn.execute(query).all():
        head, arrivals = grouped.setdefault(sid, ((who, a, p, when, n, pid), []))
        if arrived is not None:
            arrivals.append((arrived, int(now), int(then)))
    out = []
    for sid, ((who, a, p, when, n, pid), arrivals) in grouped.items():
        n -= sum(1 for i in advisory.get(f"{a}/{p}", ()) if i < n)
        right = sum(r for _, r, _ in arrivals)
        out.append(
            Attempt(
                f"s{sid}",
                who,
                f"{a}/{p}",
                "server",
                when,
                right / n if n else 0.0,
                right,
                n,
                False,
                pid,
                right / n if n else 0.0,
                arrivals=tuple(arrivals),
            )
        )
    return out


def batch_attempts(conn: Connection, student: Optional[str] = None) -> list:
    query = (
        select(
            batch_results.c.id,
            batch_results.c.name,
            batch_results.c.assignment,
            batch_results.c.source,
            batch_results.c.batch,
            batch_results.c.graded_at,
            batch_results.c.status,
            batch_results.c.reason,
            batch_questions.c.question,
            batch_questions.c.score,
            batch_questions.c.max_score,
        )
        .join(batch_questions, batch_questions.c.result_id == batch_results.c.id)
        .order_by(batch_results.c.graded_at, batch_results.c.id, batch_questions.c.question)
    )
    if student is not None:
        query = query.where(batch_results.c.name == student)
    per_case = select(
        batch_cases.c.result_id,
        batch_cases.c.question,
        func.sum(case((batch_cases.c.passed, 1), else_=0)),
        func.count(),
    ).group_by(batch_cases.c.result_id, batch_cases.c.question)
    if student is not None:  # one student's page counts that student's cases, not the class's
        per_case = per_case.where(
            batch_cases.c.result_id.in_(select(batch_results.c.id).where(batch_results.c.name == student))
        )
    counts = {}
    for rid, question, passed, total in conn.execute(per_case).all():
        counts[(rid, question)] = (int(passed), int(total))
    replaced = _replaced(conn, student)
    out = []
    for rid, who, a, source, batch, when, status, reason, q, score, top in conn.execute(query).all():
        right, n = counts.get((rid, q), (0, 0))
        fraction = min(1.0, score / top)
        before = replaced.get((a, batch, who), {}).get(q)
        previous = None if before is None else min(1.0, before[0] / before[1]) if before[1] else 0.0
        out.append(
            Attempt(
                f"b{rid}",
                who,
                f"{a}/{q}",
                f"batch {source}",
                when,
                fraction,
                right,
                n,
                False,
                on_time=fraction,
                previous=None if previous == fraction else previous,
                attention="" if status == "graded" else f"{status}: {reason}",
            )
        )
    return out


def _replaced(conn: Connection, student: Optional[str] = None) -> dict:
    """(assignment, batch, name) -> {question: (score, max_score)} the last regrade replaced."""
    query = select(
        batch_history.c.assignment, batch_history.c.batch, batch_history.c.name, batch_history.c.questions
    ).order_by(batch_history.c.replaced_at, batch_history.c.id)
    if student is not None:
        query = query.where(batch_history.c.name == student)
    out = {}
    for assignment, batch, name, questions in conn.execute(query).all():
        try:
            out[(assignment, batch, name)] = {q: (float(s), float(m)) for q, (s, m) in json.loads(questions).items()}
        except (ValueError, TypeError, AttributeError):
            continue  # a row that does not read: no mark rather than no gradebook
    return out
