"""The mugrade wire protocol: /submit, /submit_test, /publish.

These are plain Starlette routes, not FastAPI ones: FastAPI's per-request
dependency solving cost more CPU than the grading itself, and /submit_test is
the hot path at a deadline. Parameters are validated here (every mistake gets
our one-line message) and described to OpenAPI by `OPENAPI_PATHS`.

Answers carry mugrade's keys and may add more, which mugrade clients ignore:
/submit also `num_cases`, `late` and the question's `deadline` (ISO 8601 UTC or
null); /submit_test adds `"late": true` and `deadline` to an answer sent after
its question's deadline (as on arrival: the gradebook judges lateness again at
read time, grader.server.gradebook.timing), and a `reason` to a wrong one. /publish echoes the deadline in UTC and in the course's zone (`deadline_shown`),
and says how many stored answers it re-judged (`regraded`).
"""

import datetime as dt
import hashlib
import json
import math
from typing import Optional

from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from grader.server.accounts.users import has_control_characters
from grader.server.answers import values
from grader.server.gradebook.timing import clock, extensions, regrade, rules
from grader.server.store import protocol
from grader.server.store.db import assignments, problems
from grader.shipped.tolerance import ATOL, RTOL

from . import casenotes
from .limits import content_length, read_body
from .refused import Refused

# Bodies bigger than this are decoded and graded in a worker thread, so one
# large value does not stall every other request on the event loop.
INLINE_GRADING_BYTES = 64 * 1024


def required(value: Optional[str], name: str) -> str:
    if value is None or not value.strip():
        raise Refused(400, f"missing query parameter '{name}'")
    if len(value) > 200:
        raise Refused(400, f"query parameter '{name}' is longer than 200 characters")
    if has_control_characters(value):
        raise Refused(400, f"query parameter '{name}' holds control characters (e.g. NUL); use printable text")
    return value.strip()


def integer(value: Optional[str], name: str) -> int:
    text = required(value, name)
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise Refused(400, f"query parameter '{name}' must be a non-negative integer, got {text[:40]!r}")
    return int(text)


def number(value: Optional[str], name: str, default: Optional[float], positive=False):
    if value is None or value == "":
        return default
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        raise Refused(
            400,
            f"query parameter '{name}' must be a {'positive' if positive else 'non-negative'} "
            f"number, got {value[:40]!r}",
        )
    return x


DEADLINE_YEARS = (1970, 2999)  # wide enough for any course, and every database stores it


def parse_deadline(value: Optional[str], zone: str = ""):
    """An ISO 8601 time with its zone, as naive UTC. A time without a zone takes the course's
    declared `zone`, and is refused when there is none: taken as UTC, 23:59 in a course eight
    hours west of Greenwich would close at 15:59."""
    if not value:
        return None
    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if t.tzinfo is None and zone:
            from zoneinfo import ZoneInfo

            t = t.replace(tzinfo=ZoneInfo(zone))
        if t.tzinfo is None:
            raise Refused(
                400,
                f"query parameter 'deadline' must be ISO 8601 with a time zone, like "
                f"{t:%Y-%m-%dT%H:%M:%S}+00:00 (UTC) or {t:%Y-%m-%dT%H:%M:%S}-08:00, "
                f"got {value[:40]!r} (no zone)",
            )
        t = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
    except (ValueError, OverflowError):  # OverflowError: a zone pushes year 1 or 9999 out of range
        raise Refused(
            400, f"query parameter 'deadline' must be ISO 8601 like 2026-01-31T23:59:00+00:00, got {value[:40]!r}"
        ) from None
    low, high = DEADLINE_YEARS
    if not low <= t.year <= high:
        raise Refused(400, f"query parameter 'deadline' must be between the years {low} and {high}, got {value[:40]!r}")
    return t


def utc_text(when: Optional[dt.datetime]) -> Optional[str]:
    """A stored (naive UTC) time as ISO 8601 with its zone, for clients; None stays None."""
    return None if when is None else when.replace(tzinfo=dt.timezone.utc).isoformat()


async def submit(request: Request):
    svc, q = request.app.state.services, request.query_params
    user = await svc.authenticate(request, q.get("user_key"))
    assignment, problem = q.get("assignment"), q.get("problem")
    name_a, name_p = required(assignment, "assignment"), required(problem, "problem")
    sub = await svc.writer.run(protocol.submission_job(name_a, name_p, user.id, svc.quota(user)))
    if sub == protocol.OVER_QUOTA:
        raise _over_quota(svc)
    if sub is None:
        raise Refused(
            404,
            f"problem '{name_p}' of assignment '{name_a}' has no published answers: "
            "check the names, or ask your instructor to publish",
        )
    svc.remember(sub)
    return JSONResponse(
        {"submission_id": sub.id, "num_cases": sub.num_cases, "late": sub.late, "deadline": utc_text(sub.deadline)}
    )


async def submit_test(request: Request):
    svc, q = request.app.state.services, request.query_params
    user = await svc.authenticate(request, q.get("user_key"))
    sid, index = integer(q.get("submission_id"), "submission_id"), integer(q.get("test_case_index"), "test_case_index")
    sub = await svc.submission(sid)
    if sub is None:
        raise Refused(404, f"no submission {sid}: start one with /submit first")
    if sub.user_id != user.id:
        raise Refused(403, f"submission {sid} belongs to another user; start your own with /submit")
    if index >= sub.num_cases:
        raise Refused(
            400,
            f"test_case_index {index} is out of range: this problem has {sub.num_cases} cases (0..{sub.num_cases - 1})",
        )
    pub = await svc.publication(sub.publication_id)
    cfg = svc.config
    limit = pub.answer_limit(index, cfg.answer_bytes_factor, cfg.min_answer_bytes, cfg.max_body_bytes)
    declared = content_length(request.scope)
    if declared is not None:  # charged before the body is read: a refused answer costs no reading
        _charge_answer_bytes(svc, user, min(declared, limit))
    # Only now, once the key is known; bounded by the published answer's size, so a
    # huge value is refused from its Content-Length, before it is read or decoded.
    body = await read_body(
        request,
        limit,
        f"answer to case {index}",
        f" ({cfg.answer_bytes_factor:g} times the published answer's, at least "
        f"{cfg.min_answer_bytes}); check the value's shape",
    )
    if declared is None:
        _charge_answer_bytes(svc, user, len(body))
    verdict, digest, keep = await _grade(svc.config, body, pub, index)
    write = protocol.CaseWrite(
        sid,
        index,
        verdict.correct,
        digest,
        keep,
        user.id,
        svc.quota(user),
        "" if verdict.correct else verdict.reason or "wrong",
    )
    record = await svc.writer.run_bulk(protocol.insert_cases, write)
    if record.over_quota:
        raise _over_quota(svc)
    if record.conflict:
        raise Refused(
            409,
            f"test case {index} of submission {sid} was already answered with another "
            "value; start a new submission with /submit",
        )
    answer = {"correct": record.correct}
    if record.late:  # beyond mugrade's answer: clients that do not know these keys ignore them
        answer.update(late=True, deadline=utc_text(record.deadline))
    if not record.correct and verdict.reason:
        answer["reason"] = await casenotes.named_reason(svc, sub.publication_id, index, verdict.reason)
    return JSONResponse(answer)


def _charge_answer_bytes(svc, user, size: int):
    """Spend `size` of the key's answer bytes (ServerConfig.answer_bytes_per_second), or 429."""
    wait = svc.answer_bytes.retry_after(user.id, size)
    if wait:
        raise Refused(
            429,
            f"too many answer bytes from this key: try again in {wait} s (at most "
            f"{svc.config.answer_bytes_per_second / 1024:g} KB a second)",
            {"Retry-After": str(wait)},
        )


def _over_quota(svc) -> Refused:
    mb = svc.config.quota_bytes / 2**20
    return Refused(
        403,
        f"storage quota reached: this key has stored its {mb:.3g} MB; nothing more is "
        "saved for it. Ask your instructor to raise the quota (grader serve --quota-mb)",
    )


async def _grade(config, body: bytes, pub: protocol.Publication, index: int):
    """(verdict, the body's sha256, the body as text to keep or None when too large)."""

    def grade():
        try:
            got = values.parse(body, config.max_json_depth, config.max_array_elements)
        except values.BadValue as e:
            raise Refused(400, f"submitted value: {e}") from None
        keep = body.decode("utf-8") if len(body) <= config.max_stored_value_bytes else None  # parsed: UTF-8
        return values.compare(pub.expected[index], got, pub.rtol, pub.atol), hashlib.sha256(body).hexdigest(), keep

    if len(body) <= INLINE_GRADING_BYTES:
        return grade()
    return await run_in_threadpool(grade)


async def publish(request: Request):
    svc, q = request.app.state.services, request.query_params
    user = await svc.authenticate(request, q.get("user_key"))
    if not user.is_instructor:
        raise Refused(403, f"only instructors can publish; '{user.name}' is a {user.role}")
    name_a, name_p = required(q.get("assignment"), "assignment"), required(q.get("problem"), "problem")
    cfg = svc.config
    tol_r, tol_a = number(q.get("rtol"), "rtol", RTOL), number(q.get("atol"), "atol", ATOL)
    points = number(q.get("weight"), "weight", None, positive=True)
    zone = await svc.read(clock.zone)
    due = parse_deadline(q.get("deadline"), zone)
    raw = await run_in_threadpool(_published_values, await request.body(), cfg)
    pid = await svc.writer.run(
        _logged_publish(
            protocol.publish_job(name_a, name_p, user.id, raw, tol_r, tol_a, points, due),
            name_a,
            name_p,
            due,
            user.name,
        )
    )
    answer = {"publication_id": pid, "num_cases": len(raw)}
    if due is not None:  # the deadline as the server stored it, to echo back to the instructor
        answer.update(deadline=utc_text(due), deadline_shown=rules.shown(due, zone))
    # The stored answers of this question judged against other published answers are re-judged.
    found = await svc.read(regrade.pending, pid)
    if found.rows or found.kept_cases or found.kept_unstored:
        outcome = await run_in_threadpool(regrade.judge, await svc.publication(pid), found)
        await svc.writer.run(regrade.record_job(pid, outcome, user.name, name_a, name_p))
        answer["regraded"] = outcome.to_dict()
    return JSONResponse(answer)


def _logged_publish(job, assignment: str, problem: str, due, by: str):
    """The publish job, logging the deadline it changes (timing.changes) in its transaction."""

    def logged(conn):
        before = conn.execute(
            select(problems.c.deadline)
            .join(assignments, assignments.c.id == problems.c.assignment_id)
            .where(assignments.c.name == assignment, problems.c.name == problem)
        ).first()
        pid = job(conn)
        if due is not None:
            extensions.record_published_deadline(conn, assignment, problem, before[0] if before else None, due, by)
        return pid

    return logged


def _published_values(body: bytes, config) -> list:
    try:
        raw = json.loads(body) if body else None
        if not isinstance(raw, list) or not raw:
            raise values.BadValue("the body must be a non-empty JSON list of encoded values, one per case")
        values.decode(raw, config.max_json_depth, config.max_array_elements)
    except RecursionError:
        raise Refused(400, f"published values: nest deeper than {config.max_json_depth} levels") from None
    except (values.BadValue, ValueError, UnicodeDecodeError) as e:
        raise Refused(400, f"published values: {e}"[:300]) from None
    return raw


async def healthz(_request: Request):
    return PlainTextResponse("ok\n")


routes = [
    Route("/submit", submit, methods=["POST"]),
    Route("/submit_test", submit_test, methods=["POST"]),
    Route("/publish", publish, methods=["POST"]),
    Route("/healthz", healthz, methods=["GET"]),
]


def _param(name, text, required=True):
    return {"name": name, "in": "query", "required": required, "description": text, "schema": {"type": "string"}}


_KEY = _param("user_key", "the user's key (or send 'Authorization: Bearer KEY')", required=False)
_JSON_BODY = {"required": True, "content": {"application/json": {"schema": {}}}}
_ANSWER = {"200": {"description": "JSON answer"}, "4xx": {"description": "one line of text: what is wrong"}}
OPENAPI_PATHS = {
    "/submit": {
        "post": {
            "summary": "start a submission of one problem",
            "responses": _ANSWER,
            "parameters": [_KEY, _param("assignment", "assignment name"), _param("problem", "problem name")],
        }
    },
    "/submit_test": {
        "post": {
            "summary": "grade one test case of a submission",
            "requestBody": _JSON_BODY,
            "responses": _ANSWER,
            "parameters": [_KEY, _param("submission_id", "from /submit"), _param("test_case_index", "0, 1, ...")],
        }
    },
    "/publish": {
        "post": {
            "summary": "publish the answers of a problem (instructors)",
            "requestBody": _JSON_BODY,
            "responses": _ANSWER,
            "parameters": [
                _KEY,
                _param("assignment", "assignment name"),
                _param("problem", "problem name"),
                _param(
                    "rtol", f"relative tolerance of every case of the problem (default {RTOL:g}, the cases' own)", False
                ),
                _param(
                    "atol", f"absolute tolerance of every case of the problem (default {ATOL:g}, the cases' own)", False
                ),
                _param("weight", "points of the problem in the total (default 1)", False),
                _param("deadline", "ISO 8601 deadline of this problem (each problem has its own)", False),
            ],
        }
    },
    "/healthz": {"get": {"summary": "liveness probe", "responses": {"200": {"description": "ok"}}}},
}
