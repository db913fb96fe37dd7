"""CI outputs of a Report: GitHub annotations and job summary (`grader
grade --format github`, or on any GitHub Actions runner); the legacy GitHub
Classroom result (classroom_result) is no longer written, only rendered.

The rendering lives in grader/shipped/github_ci.py, which also ships in
the handout (the student's workflow renders its public cases with it); here
a Report becomes that module's results document, so both sides print the
same annotations and tables. Every function but emit_github is pure.
"""

import os
import sys

from grader.grading.report import results as rep
from grader.grading.report.writing import MARKDOWN
from grader.shipped import github_ci

GITHUB = "github"
FORMATS = ("auto", "plain", GITHUB)


def document(report: rep.Report) -> dict:
    """The results document of github_ci for a grader's Report (all cases,
    hidden ones with the feedback the report gives them)."""
    notes = [*report.notes, *([report.error] if report.error else [])]
    return {
        "version": 1,
        "title": f"needle {report.assignment}",
        "questions": [
            {
                "key": q.key,
                "label": q.label,
                "score": q.score,
                "max_score": q.max_score,
                "passed": q.passed,
                "total": q.total,
            }
            for q in report.questions
        ],
        "cases": [
            {
                "name": c.name,
                "question": c.question,
                "score": round(c.score, 4),
                "max_score": round(c.max_score, 4),
                "passed": c.passed,
                "stub": c.stub,
                "message": c.output,
                "where": c.where,
            }
            for c in report.cases
        ],
        "errors": [{"message": report.error, "where": ""}] if report.error else [],
        "notes": notes,
        "report": MARKDOWN,
    }


def annotations(report: rep.Report) -> str:
    return "".join(line + "\n" for line in github_ci.annotations(document(report)))


def step_summary(report: rep.Report) -> str:
    return github_ci.summary(document(report))


def classroom_result(report: rep.Report) -> str:
    return github_ci.classroom_result(document(report))


def wanted(fmt: str, env=None) -> bool:
    """Whether to emit GitHub outputs: asked for, or on a GitHub runner."""
    env = os.environ if env is None else env
    return fmt == GITHUB or (fmt == "auto" and env.get("GITHUB_ACTIONS") == "true")


commands_stopped = github_ci.commands_stopped


def emit_github(report: rep.Report, env=None, out=None):
    """Annotations to `out`, the summary to the runner's file."""
    github_ci.emit(document(report), os.environ if env is None else env, out or sys.stdout)
