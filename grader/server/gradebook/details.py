"""One student's submissions, each case with its name, description and reason.

The server keeps each submitted value (up to a size) but not the reason it
was wrong: the reason is recomputed here from the stored value and the
publication the submission was graded against, with the same comparison
/submit_test used, so it is the same text. Imported results carry their
grader's feedback as is.
"""
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Connection

from grader.server.answers import values
from grader.server.config import ServerConfig
from grader.server.store import protocol
from grader.server.store.db import case_results
from grader.server.store.records import batch_cases, batch_results, case_notes

from . import load
from . import declared


@dataclass(frozen=True)
class CaseView:
    label: str        # "case 3" (server) or "Q1.2" (imported)
    name: str
    description: str
    passed: bool
    reason: str       # why it is wrong; "" when passed
    hidden: bool = False


@dataclass(frozen=True)
class SubmissionView:
    attempt: load.Attempt
    cases: tuple


def submissions(conn: Connection, student: str) -> tuple:
    """Every submission of `student`, server and imported, newest first."""
    attempts = load.server_attempts(conn, student) + load.batch_attempts(conn, student)
    attempts.sort(key=lambda a: load.question_order(a.question))  # within one imported result
    attempts.sort(key=lambda a: (a.when, a.key), reverse=True)  # stable: newest first
    server = _server_cases(conn, [a for a in attempts if a.source == "server"])
    batch = _batch_cases(conn, {int(a.key[1:]) for a in attempts if a.source != "server"})
    return tuple(SubmissionView(a, server.get(a.key, ()) if a.source == "server"
                                else batch.get((int(a.key[1:]), a.question.split("/", 1)[1]), ()))
                 for a in attempts)


def _server_cases(conn: Connection, attempts) -> dict:
    if not attempts:
        return {}
    ids = [int(a.key[1:]) for a in attempts]
    answers = {}
    for sid, idx, ok, raw in conn.execute(
            select(case_results.c.submission_id, case_results.c.test_case_index, case_results.c.correct,
                   case_results.c.value_json).where(case_results.c.submission_id.in_(ids))).all():
        answers[(sid, idx)] = (bool(ok), raw)
    pids = {a.publication_id for a in attempts}
    notes = {(p, i): (n, d) for p, i, n, d in conn.execute(
        select(case_notes.c.publication_id, case_notes.c.test_case_index, case_notes.c.name,
               case_notes.c.description).where(case_notes.c.publication_id.in_(pids))).all()}
    pubs = {pid: _publication(conn, pid) for pid in pids}
    out = {}
    for a in attempts:
        sid, pub = int(a.key[1:]), pubs[a.publication_id]
        views = []
        for i in range(a.total):
            name, text = notes.get((a.publication_id, i), ("", ""))
            ok, raw = answers.get((sid, i), (False, None))
            reason = "" if ok else ("not answered" if (sid, i) not in answers else _reason(pub, i, raw))
            views.append(CaseView(f"case {i}", name, text, ok, reason))
        out[a.key] = tuple(views)
    return out


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
    assignment = dict(conn.execute(select(batch_results.c.id, batch_results.c.assignment)
                                   .where(batch_results.c.id.in_(result_ids))).all())
    out = {}
    for rid, question, number, name, ok, hidden, output in conn.execute(
            select(batch_cases.c.result_id, batch_cases.c.question, batch_cases.c.number, batch_cases.c.name,
                   batch_cases.c.passed, batch_cases.c.hidden, batch_cases.c.output)
            .where(batch_cases.c.result_id.in_(result_ids)).order_by(batch_cases.c.position)).all():
        text = declared.of(assignment[rid]).descriptions.get(name, output if ok else "")
        out.setdefault((rid, question), []).append(
            CaseView(number or name, name, text, bool(ok), "" if ok else (output or "failed"), bool(hidden)))
    return {k: tuple(v) for k, v in out.items()}
