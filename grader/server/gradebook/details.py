"""One student's submissions, each case with its name, description and reason.

The reason a case is wrong is judged once, when it is answered, and stored
with the verdict: a page reads it and never re-grades (re-parsing every
stored value cost seconds of CPU per load). Cases answered before reasons
were stored get theirs computed once, from the stored value and the
publication the submission was graded against, with the same comparison
/submit_test used (`unstored_reasons`, then `store_reasons_job`). Imported
results carry their grader's feedback as is.
"""

from dataclasses import dataclass
from typing import Optional

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection

from grader.server.answers import values
from grader.server.config import ServerConfig
from grader.server.store import protocol
from grader.server.store.db import case_results, users
from grader.server.store.db import submissions as submission_rows
from grader.server.store.records import batch_cases, batch_results, case_notes

from . import declared, load, policy


@dataclass(frozen=True)
class CaseView:
    label: str  # "case 3" (server) or "Q1.2" (imported)
    name: str
    description: str
    passed: bool
    reason: str  # why it is wrong; "" when passed
    hidden: bool = False


@dataclass(frozen=True)
class SubmissionView:
    attempt: load.Attempt
    cases: tuple


def submissions(conn: Connection, student: str, attempts: Optional[list] = None) -> tuple:
    """Every submission of `student`, server and imported, newest first; `attempts`: theirs,
    when the caller has read them already (`load.attempts`)."""
    attempts = list(load.attempts(conn, student, policy.advisory_cases(conn)) if attempts is None else attempts)
    attempts.sort(key=lambda a: load.question_order(a.question))  # within one imported result
    attempts.sort(key=lambda a: (a.when, a.key), reverse=True)  # stable: newest first
    server = _server_cases(conn, [a for a in attempts if a.source == "server"])
    batch = _batch_cases(conn, {int(a.key[1:]) for a in attempts if a.source != "server"})
    return tuple(
        SubmissionView(
            a,
            server.get(a.key, ())
            if a.source == "server"
            else batch.get((int(a.key[1:]), a.question.split("/", 1)[1]), ()),
        )
        for a in attempts
    )


def _server_cases(conn: Connection, attempts) -> dict:
    if not attempts:
        return {}
    ids = [int(a.key[1:]) for a in attempts]
    correct, why, join_verdicts = load.verdict_in_force()  # a republish may have re-judged them
    answers = {
        (sid, idx): (bool(ok), reason)
        for sid, idx, ok, reason in conn.execute(
            join_verdicts(
                select(case_results.c.submission_id, case_results.c.test_case_index, correct, why).select_from(
                    case_results
                )
            ).where(case_results.c.submission_id.in_(ids))
        ).all()
    }
    pids = {a.publication_id for a in attempts}
    notes = {
        (p, i): (n, d)
        for p, i, n, d in conn.execute(
            select(
                case_notes.c.publication_id, case_notes.c.test_case_index, case_notes.c.name, case_notes.c.description
            ).where(case_notes.c.publication_id.in_(pids))
        ).all()
    }
    unstored = {}
    if any(not ok and reason is None for ok, reason in answers.values()):  # answered before reasons were kept
        unstored = {(sid, i): reason for _, sid, i, reason in _judge_unstored(conn, ids)}
    out = {}
    for a in attempts:
        sid, views = int(a.key[1:]), []
        for i in range(a.total):
            name, text = notes.get((a.publication_id, i), ("", ""))
            ok, reason = answers.get((sid, i), (False, "not answered"))
            reason = "" if ok else reason if reason is not None else unstored.get((sid, i), "wrong")
            views.append(CaseView(f"case {i}", name, text, ok, reason))
        out[a.key] = tuple(views)
    return out


def unstored_reasons(conn: Connection, student: str) -> list:
    """[(case result id, reason)] for `student`'s wrong cases whose reason was never stored."""
    sids = (
        select(submission_rows.c.id).join(users, users.c.id == submission_rows.c.user_id).where(users.c.name == student)
    )
    return [(rid, reason) for rid, _, _, reason in _judge_unstored(conn, sids)]


def _judge_unstored(conn: Connection, submission_ids) -> list:
    """[(id, submission id, index, reason)] of the wrong cases without a stored reason."""
    rows = conn.execute(
        select(
            case_results.c.id,
            case_results.c.submission_id,
            case_results.c.test_case_index,
            case_results.c.value_json,
            submission_rows.c.publication_id,
        )
        .join(submission_rows, submission_rows.c.id == case_results.c.submission_id)
        .where(
            case_results.c.submission_id.in_(submission_ids),
            case_results.c.reason.is_(None),
            case_results.c.correct.is_(False),
        )
    ).all()
    pubs = {pid: _publication(conn, pid) for pid in {r.publication_id for r in rows}}
    return [
        (r.id, r.submission_id, r.test_case_index, _reason(pubs[r.publication_id], r.test_case_index, r.value_json))
        for r in rows
    ]


def store_reasons_job(judged: list):
    """Write: keep the reasons `unstored_reasons` judged, so that no page judges them again."""

    def job(conn: Connection):
        still_unstored = (case_results.c.id == bindparam("rid"), case_results.c.reason.is_(None))
        conn.execute(
            update(case_results).where(*still_unstored).values(reason=bindparam("why")),
            [{"rid": rid, "why": why} for rid, why in judged],
        )

    return job


def _publication(conn: Connection, pid: int):
    try:
        return protocol.decode_publication(protocol.publication_row(conn, pid))
    except Exception:  # a publication that no longer decodes: show verdicts without reasons
        return None


def _reason(pub, index: int, raw) -> str:
    if raw is None:
        return "wrong (the value was too large to keep, so no reason is available)"
    if pub is None or index >= len(pub.expected):
        return "wrong"
    config = ServerConfig()
    try:
        got = values.parse(raw.encode("utf-8"), config.max_json_depth, config.max_array_elements)
    except values.BadValue as e:
        return f"unreadable value: {e}"
    verdict = values.compare(pub.expected[index], got, pub.rtol, pub.atol)
    return verdict.reason or "wrong"


def _batch_cases(conn: Connection, result_ids) -> dict:
    if not result_ids:
        return {}
    assignment = dict(
        conn.execute(
            select(batch_results.c.id, batch_results.c.assignment).where(batch_results.c.id.in_(result_ids))
        ).all()
    )
    out = {}
    for rid, question, number, name, ok, hidden, output in conn.execute(
        select(
            batch_cases.c.result_id,
            batch_cases.c.question,
            batch_cases.c.number,
            batch_cases.c.name,
            batch_cases.c.passed,
            batch_cases.c.hidden,
            batch_cases.c.output,
        )
        .where(batch_cases.c.result_id.in_(result_ids))
        .order_by(batch_cases.c.position)
    ).all():
        text = declared.of(assignment[rid]).descriptions.get(name, output if ok else "")
        out.setdefault((rid, question), []).append(
            CaseView(number or name, name, text, bool(ok), "" if ok else (output or "failed"), bool(hidden))
        )
    return {k: tuple(v) for k, v in out.items()}
