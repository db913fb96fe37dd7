"""Classroom 50's records of a run of the public cases: `result.json` (its
classroom50/result/v1 contract) and `release-body.md` (the Release's text,
which Classroom 50's runner also shows as the run's Summary).

Input: the results document of github_ci.py (what `make test
RESULTS=FILE` writes: per question its exact points and cases passed) and
the runner's environment. One test per question, named "Q1 forward", with
whole points (int_points.py: largest remainder, documented there); the
exact points ride along in `exact-score` / `exact-max-score`, fields the
contract keeps verbatim. Pure functions; standard library only.
"""

import datetime
from fractions import Fraction

from . import github_ci, int_points

SCHEMA = "classroom50/result/v1"
SUBMIT_PREFIX = "submit/"
# Set by Classroom 50's runner for autograder.py; REVIEW_URL falls back to COMMIT_URL.
REQUIRED_ENV = ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL")
ASSIGNMENT_TYPES = ("individual", "group", "team")


class EnvironmentIncomplete(ValueError):
    """The runner's variables are missing or malformed; the message says which."""


def identity(env) -> dict:
    """The submission's identity fields from the runner's environment."""
    missing = [name for name in REQUIRED_ENV if not env.get(name, "").strip()]
    owner = (env.get("OWNER") or env.get("USERNAME") or "").strip()
    if not owner:
        missing.append("OWNER (or USERNAME)")
    if missing:
        raise EnvironmentIncomplete(
            f"{', '.join(missing)} not set: run it from Classroom 50's runner, "
            "which sets them (see docs/instructor/ci/classroom50.md)"
        )
    if not env["SUBMISSION_TAG"].startswith(SUBMIT_PREFIX):
        raise EnvironmentIncomplete(f"SUBMISSION_TAG={env['SUBMISSION_TAG']!r} is not a {SUBMIT_PREFIX}* tag")
    kind = (env.get("ASSIGNMENT_TYPE") or "individual").strip().lower()
    return {
        "classroom": env["CLASSROOM"].strip(),
        "assignment": env["ASSIGNMENT"].strip(),
        "assignment_type": kind if kind in ASSIGNMENT_TYPES else "individual",
        "owner": owner,
        "submission": env["SUBMISSION_TAG"].strip(),
        "commit": env["COMMIT_URL"].strip(),
        "release": env["RELEASE_URL"].strip(),
        "review": (env.get("REVIEW_URL") or env["COMMIT_URL"]).strip(),
    }


def _exact(value, unit: int) -> Fraction:
    # The document's points are whole multiples of 1/unit, written as floats.
    return Fraction(round(value * unit), unit)


def question_points(doc, unit: int) -> list:
    """[(question, passed, whole score, whole max, exact score, exact max)]."""
    questions = doc["questions"]
    exact_max = [_exact(q["max_score"], unit) for q in questions]
    earned = [min(_exact(q["score"], unit), m) for q, m in zip(questions, exact_max)]
    maxima = int_points.whole_maxima(exact_max)
    scores = int_points.whole_scores(earned, exact_max, maxima)
    return [
        (q, q["total"] > 0 and e == x, s, m, e, x)
        for q, s, m, e, x in zip(questions, scores, maxima, earned, exact_max)
    ]


def _utc(now: datetime.datetime) -> str:
    return now.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def result(doc, ids: dict, unit: int, now: datetime.datetime) -> dict:
    """The result.json payload. `datetime` is this run's time: the runner
    replaces it with the graded commit's committer date, which a student
    sets, so neither decides lateness (docs: instructor/ci/classroom50.md)."""
    rows = question_points(doc, unit)
    tests = [
        {
            "test-name": f"{q['label']} {q['key']}",
            "passed": passed,
            "score": s,
            "max-score": m,
            "exact-score": float(e),
            "exact-max-score": float(x),
            "cases-passed": f"{q['passed']}/{q['total']}",
        }
        for q, passed, s, m, e, x in rows
    ]
    return {
        "schema": SCHEMA,
        **ids,
        "datetime": _utc(now),
        "graded_at": _utc(now),
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "exact-score": float(sum((e for *_, e, _ in rows), Fraction(0))),
        "exact-max-score": float(sum((x for *_, x in rows), Fraction(0))),
        "tests": tests,
    }


def _points(value) -> str:
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


ROUNDING_NOTE = (
    "Classroom 50 records whole points: each question's maximum is its exact worth rounded by "
    "largest remainder, and a question shows its full points only when all its public cases "
    "pass."
)


def release_body(doc, payload: dict) -> str:
    """The Release's Markdown: the whole points Classroom 50 records, then
    the exact points table and failing lines the GitHub summary shows
    (github_ci.summary: our own text only, never a student's output)."""
    lines = [
        f"### {doc['title']}: {payload['score']}/{payload['max-score']} points",
        "",
        "| question | cases passed | points | exact points |",
        "|---|---|---|---|",
    ]
    for t in payload["tests"]:
        mark = "PASS" if t["passed"] else "FAIL"
        lines.append(
            f"| {t['test-name']} | {t['cases-passed']} {mark} | {t['score']}/{t['max-score']} | "
            f"{_points(t['exact-score'])}/{_points(t['exact-max-score'])} |"
        )
    lines.append(
        f"| **total** | | **{payload['score']}/{payload['max-score']}** | "
        f"{_points(payload['exact-score'])}/{_points(payload['exact-max-score'])} |"
    )
    lines += ["", ROUNDING_NOTE, "", github_ci.summary(doc)]
    return "\n".join(lines).rstrip("\n") + "\n"
