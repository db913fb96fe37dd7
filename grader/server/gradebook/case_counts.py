"""The gradebook's per-case queries: how many students answered and passed
each case (both sources), and the case descriptions the pages show."""

from dataclasses import dataclass

from sqlalchemy import case, func, select
from sqlalchemy.engine import Connection

from grader.server.store.db import assignments, case_results, problems, publications, submissions, users
from grader.server.store.records import batch_cases, batch_results, case_notes

from . import declared


@dataclass(frozen=True)
class CaseCount:
    """One case of one question, over all students: `case` identifies it within its question."""

    question: str
    case: tuple  # ("server", index) or ("batch", name)
    tried: int  # students who answered it
    passed: int  # of those, students who passed it at least once


def case_counts(conn: Connection) -> list:
    """Per question and case: how many students answered it and how many passed it, from both
    sources. Counted in SQL: a class has 10^5 case results, the gradebook needs a few hundred."""
    labels = {
        pid: f"{a}/{p}"
        for pid, a, p in conn.execute(
            select(problems.c.id, assignments.c.name, problems.c.name).join(
                assignments, assignments.c.id == problems.c.assignment_id
            )
        ).all()
    }
    who = submissions.c.user_id
    server = conn.execute(
        select(
            submissions.c.problem_id,
            case_results.c.test_case_index,
            func.count(func.distinct(who)),
            func.count(func.distinct(case((case_results.c.correct, who)))),
        )
        .join(submissions, submissions.c.id == case_results.c.submission_id)
        .where(who.in_(select(users.c.id).where(users.c.role == "student")))
        .group_by(submissions.c.problem_id, case_results.c.test_case_index)
    ).all()
    name = batch_results.c.name
    batch = conn.execute(
        select(
            batch_results.c.assignment,
            batch_cases.c.question,
            batch_cases.c.name,
            func.count(func.distinct(name)),
            func.count(func.distinct(case((batch_cases.c.passed, name)))),
        )
        .join(batch_results, batch_results.c.id == batch_cases.c.result_id)
        .group_by(batch_results.c.assignment, batch_cases.c.question, batch_cases.c.name)
    ).all()
    return [CaseCount(labels[pid], ("server", idx), tried, ok) for pid, idx, tried, ok in server] + [
        CaseCount(f"{a}/{q}", ("batch", case_name), tried, ok) for a, q, case_name, tried, ok in batch
    ]


def server_case_notes(conn: Connection) -> dict:
    """(question label, index) -> (name, description), from each problem's latest described publication."""
    rows = conn.execute(
        select(
            assignments.c.name,
            problems.c.name,
            case_notes.c.publication_id,
            case_notes.c.test_case_index,
            case_notes.c.name,
            case_notes.c.description,
        )
        .join(publications, publications.c.id == case_notes.c.publication_id)
        .join(problems, problems.c.id == publications.c.problem_id)
        .join(assignments, assignments.c.id == problems.c.assignment_id)
        .order_by(case_notes.c.publication_id)
    ).all()
    return {(f"{a}/{p}", idx): (name, text) for a, p, _, idx, name, text in rows}


def batch_case_notes(conn: Connection) -> dict:
    """(question label, case name) -> (name, description): the grader's own description of
    the case when its assignment declares it, else the output of a passing run (which describes it)."""
    notes = {}
    for a, q, name, ok, output in conn.execute(
        select(
            batch_results.c.assignment,
            batch_cases.c.question,
            batch_cases.c.name,
            batch_cases.c.passed,
            batch_cases.c.output,
        ).join(batch_results, batch_results.c.id == batch_cases.c.result_id)
    ).all():
        key, known = (f"{a}/{q}", name), declared.of(a).descriptions
        if name in known:
            notes[key] = (name, known[name])
        elif ok or key not in notes:
            notes[key] = (name, output if ok else "")
    return notes
