"""Republishing a question re-judges its stored answers against the answers now published.

Each stored answer (a case result) of the question whose verdict in force was
judged against other published answers is compared again, with the same
comparison /submit_test uses, against the new publication; its new verdict
is a `verdicts` row (the original stays in case_results), and the
republish is logged as a "regrade" (changes.py) with its counts. Not re-judged,
and counted as kept: answers of a submission whose publication had another
number of cases (its indexes may mean other cases), and values too large to
have been stored. Every re-judged answer gets a row, changed or not, so an
identical republish later (say, to move a deadline) finds nothing to re-judge. Reading and comparing run in a worker thread; only the
changed verdicts go through the writer.
"""

from dataclasses import dataclass

from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection

from grader.server.answers import values
from grader.server.config import ServerConfig
from grader.server.store.db import case_results, now, publications, submissions
from grader.server.store.timetables import verdicts

from . import changes


@dataclass(frozen=True)
class Pending:
    rows: tuple  # (case result id, index, value_json, correct in force, reason in force)
    kept_cases: int  # answers of submissions whose publication had another number of cases
    kept_unstored: int  # answers whose value was too large to keep
    submissions: int  # submissions with answers re-judged


@dataclass(frozen=True)
class Outcome:
    judged: int
    now_right: int
    now_wrong: int
    kept: int
    submissions: int
    changed: tuple  # (case result id, correct, reason) of every answer re-judged

    def summary(self) -> str:
        return (
            f"re-judged {self.judged} answers of {self.submissions} submissions: "
            f"{self.now_right} now right, {self.now_wrong} now wrong; {self.kept} kept as judged"
        )

    def to_dict(self) -> dict:
        return {"judged": self.judged, "now_right": self.now_right, "now_wrong": self.now_wrong, "kept": self.kept}


def pending(conn: Connection, publication_id: int) -> Pending:
    """The stored answers of the publication's question judged against other published answers."""
    new = conn.execute(select(publications).where(publications.c.id == publication_id)).one()
    same = select(publications.c.id).where(
        publications.c.problem_id == new.problem_id,
        publications.c.values_json == new.values_json,
        publications.c.rtol == new.rtol,
        publications.c.atol == new.atol,
    )
    latest = (
        select(verdicts.c.case_result_id, func.max(verdicts.c.id).label("vid"))
        .group_by(verdicts.c.case_result_id)
        .subquery()
    )
    now_v = verdicts.alias("verdict_now")
    judged_against = func.coalesce(now_v.c.publication_id, submissions.c.publication_id)
    query = (
        select(
            case_results.c.id,
            case_results.c.test_case_index,
            case_results.c.value_json,
            func.coalesce(now_v.c.correct, case_results.c.correct),
            func.coalesce(now_v.c.reason, case_results.c.reason),
            publications.c.num_cases,
            submissions.c.id,
        )
        .join(submissions, submissions.c.id == case_results.c.submission_id)
        .join(publications, publications.c.id == submissions.c.publication_id)
        .outerjoin(latest, latest.c.case_result_id == case_results.c.id)
        .outerjoin(now_v, now_v.c.id == latest.c.vid)
        .where(submissions.c.problem_id == new.problem_id, judged_against.not_in(same))
        .order_by(case_results.c.id)
    )
    rows, kept_cases, kept_unstored, subs = [], 0, 0, set()
    for rid, index, raw, correct, reason, n, sid in conn.execute(query).all():
        if n != new.num_cases:
            kept_cases += 1
        elif raw is None:
            kept_unstored += 1
        else:
            rows.append((rid, index, raw, bool(correct), reason))
            subs.add(sid)
    return Pending(tuple(rows), kept_cases, kept_unstored, len(subs))


def judge(pub, found: Pending) -> Outcome:
    """Compare each pending answer with `pub` (a decoded protocol.Publication); CPU only."""
    config, changed, right, wrong = ServerConfig(), [], 0, 0
    for rid, index, raw, was, reason in found.rows:
        try:
            got = values.parse(raw.encode("utf-8"), config.max_json_depth, config.max_array_elements)
            verdict = values.compare(pub.expected[index], got, pub.rtol, pub.atol)
            ok, why = verdict.correct, "" if verdict.correct else verdict.reason or "wrong"
        except values.BadValue as e:
            ok, why = False, f"unreadable value: {e}"
        changed.append((rid, ok, why))  # every one, changed or not: it is now judged against `pub`
        right += ok != was and ok
        wrong += ok != was and not ok
    return Outcome(
        len(found.rows), right, wrong, found.kept_cases + found.kept_unstored, found.submissions, tuple(changed)
    )


def record_job(publication_id: int, outcome: Outcome, by: str, assignment: str, question: str):
    """Write: the changed verdicts and the regrade's log line, together."""

    def job(conn: Connection):
        if outcome.changed:
            at = now()
            conn.execute(
                insert(verdicts),
                [
                    {
                        "case_result_id": rid,
                        "publication_id": publication_id,
                        "correct": ok,
                        "reason": why,
                        "regraded_at": at,
                    }
                    for rid, ok, why in outcome.changed
                ],
            )
        if outcome.judged or outcome.kept:
            changes.record(
                conn,
                by,
                "regrade",
                assignment,
                question,
                "earlier published answers",
                f"publication {publication_id}: {outcome.summary()}",
            )

    return job
