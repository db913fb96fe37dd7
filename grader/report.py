"""Grading results and their renderings.

`Report` holds one `CaseResult` per graded case; each writer below is a pure
function of a Report (golden-tested): Gradescope results.json, JUnit XML,
Markdown, and a gradebook CSV row.
"""
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from grader.cases import QUESTIONS


@dataclass(frozen=True)
class CaseResult:
    name: str
    question: str
    number: str           # "Q2.5": question label and position
    score: float
    max_score: float
    passed: bool
    output: str           # feedback; never the expected value of a hidden case
    hidden: bool


@dataclass(frozen=True)
class QuestionScore:
    key: str
    label: str
    score: float
    max_score: float
    passed: int
    total: int


@dataclass(frozen=True)
class Report:
    submission: str
    cases: tuple
    questions: tuple
    tier: str
    execution_time: float
    notes: tuple = field(default=())
    error: str = ""       # set when the grader itself failed

    @property
    def score(self):
        return round(sum(q.score for q in self.questions), 4)

    @property
    def max_score(self):
        return sum(points for _, points in QUESTIONS.values())


def question_scores(cases):
    """Per-question totals: points split by case weight (see grade.py)."""
    scores = []
    for key, (label, points) in QUESTIONS.items():
        mine = [c for c in cases if c.question == key]
        scores.append(QuestionScore(key, label, round(sum(c.score for c in mine), 4), points,
                                    sum(c.passed for c in mine), len(mine)))
    return tuple(scores)


def _fmt(x):
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


def gradescope_json(report):
    """Gradescope's results.json schema (one test per case)."""
    header = f"needle hw1: {_fmt(report.score)} / {report.max_score} (sandbox: {report.tier})"
    doc = {
        "score": report.score,
        "execution_time": round(report.execution_time, 2),
        "output": "\n".join([header, *report.notes, *([report.error] if report.error else [])]),
        "tests": [{
            "name": c.name,
            "number": c.number,
            "score": round(c.score, 4),
            "max_score": round(c.max_score, 4),
            "status": "passed" if c.passed else "failed",
            "output": c.output,
            "visibility": "after_published" if c.hidden else "visible",
        } for c in report.cases],
        "extra_data": {
            "questions": {q.key: {"score": q.score, "max_score": q.max_score} for q in report.questions},
            "sandbox_tier": report.tier,
        },
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def junit_xml(report):
    suite = ET.Element("testsuite", name="needle-hw1", tests=str(len(report.cases)),
                       failures=str(sum(not c.passed for c in report.cases)),
                       time=f"{report.execution_time:.2f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="sandbox_tier", value=report.tier)
    ET.SubElement(props, "property", name="score", value=_fmt(report.score))
    for c in report.cases:
        tc = ET.SubElement(suite, "testcase", classname=f"hw1.{c.question}", name=c.name)
        if not c.passed:
            ET.SubElement(tc, "failure", message=c.output.splitlines()[0] if c.output else "failed").text = c.output
    if report.error:
        ET.SubElement(suite, "system-err").text = report.error
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def score_table(report):
    """The per-question table printed by `grader grade`, Markdown-compatible."""
    lines = ["| question | cases passed | points |", "|---|---|---|"]
    for q in report.questions:
        lines.append(f"| {q.label} {q.key} | {q.passed}/{q.total} | {_fmt(q.score)}/{q.max_score} |")
    lines.append(f"| total | {sum(q.passed for q in report.questions)}/{len(report.cases)} "
                 f"| {_fmt(report.score)}/{report.max_score} |")
    return "\n".join(lines) + "\n"


def markdown(report):
    parts = [f"# needle hw1: {_fmt(report.score)} / {report.max_score}\n",
             f"Submission `{report.submission}`, sandbox tier `{report.tier}`, "
             f"{report.execution_time:.1f} s.\n"]
    parts += [f"> {note}\n" for note in report.notes]
    if report.error:
        parts.append(f"**Grader error:** {report.error}\n")
    parts.append(score_table(report))
    failed = [c for c in report.cases if not c.passed]
    if failed:
        parts.append("## Failed cases\n")
        parts += [f"- **{c.name}** ({c.number}): {c.output}" for c in failed]
    return "\n".join(parts).rstrip("\n") + "\n"


def csv_header():
    return ["submission", *QUESTIONS, "total"]


def csv_row(report):
    return [report.submission, *(_fmt(q.score) for q in report.questions), _fmt(report.score)]
