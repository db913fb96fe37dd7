"""Grading results and their renderings.

`Report` holds one `CaseResult` per graded case; each writer below is a pure
function of a Report (golden-tested): Gradescope results.json, JUnit XML,
Markdown and the terminal's score table (a gradebook row is built from
results.json: batch_book.py).
"""

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import PurePath

CONTRACT_MODE = "contract"  # advisory cases carry no points (the default)
STRICT_MODE = "strict"  # an instructor asked for advisory cases to be scored
MODE_NOTES = {
    CONTRACT_MODE: "scored on the course's contract; checks beyond it are listed apart and carry no points",
    STRICT_MODE: "strict: checks beyond the course's contract are scored too (instructor's choice)",
}
ADVISORY_TITLE = "Beyond the assignment (no points)"


@dataclass(frozen=True)
class CaseResult:
    name: str
    question: str
    number: str  # "Q2.5": question label and position ("Q2.a1" for an advisory case)
    score: float
    max_score: float
    passed: bool
    output: str  # feedback; never the expected value of a hidden case
    hidden: bool
    advisory: bool = False
    contract: str = ""  # the contract line the case checks (or goes beyond)
    blocked: bool = False  # not run: its question's worker could not import the submission
    stub: str = ""  # "Q2 EWiseDiv.gradient": it stopped at that handout stub (NotImplementedError)
    where: str = ""  # "apps/simple_ml.py:42": the student's line a failure points at (student_lines.py)


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
    error: str = ""  # set when the grader itself failed
    mode: str = CONTRACT_MODE
    assignment: str = "hw1"
    provenance: object = None  # provenance.Provenance: what graded it, its seed_id included (None: unknown)

    @property
    def score(self):
        return round(sum(q.score for q in self.questions), 4)

    @property
    def max_score(self):
        return sum(q.max_score for q in self.questions)


def question_scores(cases, questions):
    """Per-question totals of the scored cases (max_score > 0), for the
    registry's `questions`. Case scores are multiples of 1e-4 (scoring.py),
    so the sums are exact."""
    scores = []
    for q in questions:
        mine = [c for c in cases if c.question == q.key and c.max_score > 0]
        scores.append(
            QuestionScore(
                q.key, q.label, round(sum(c.score for c in mine), 4), q.points, sum(c.passed for c in mine), len(mine)
            )
        )
    return tuple(scores)


def fmt_points(x):
    """A score as reports and gradebooks print it: 7 for whole points, else 7.25."""
    return f"{x:g}" if x == int(x) else f"{x:.2f}"


def _gradescope_output(c):
    lines = [f"{ADVISORY_TITLE}: {c.output}" if c.advisory and c.max_score == 0 else c.output]
    if c.contract:
        lines.append(f"{'Goes beyond' if c.advisory else 'Contract'}: {c.contract}")
    return "\n".join(lines)


def gradescope_json(report):
    """Gradescope's results.json schema (one test per case)."""
    header = f"needle {report.assignment}: {fmt_points(report.score)} / {report.max_score} (sandbox: {report.tier})"
    doc = {
        "score": report.score,
        "execution_time": round(report.execution_time, 2),
        "output": "\n".join(
            [header, "Scoring: " + MODE_NOTES[report.mode], *report.notes, *([report.error] if report.error else [])]
        ),
        "tests": [
            {
                "name": c.name,
                "number": c.number,
                "score": round(c.score, 4),
                "max_score": round(c.max_score, 4),
                "status": "passed" if c.passed else "failed",
                "output": _gradescope_output(c),
                "visibility": "after_published" if c.hidden else "visible",
            }
            for c in report.cases
        ],
        "extra_data": {
            "questions": {q.key: {"score": q.score, "max_score": q.max_score} for q in report.questions},
            "sandbox_tier": report.tier,
            "scoring": report.mode,
            "provenance": report.provenance.to_json() if report.provenance is not None else {},
        },
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _costs_points(c):
    """A JUnit failure: a case below its points (what results.json counts)."""
    return c.score < c.max_score


def _junit_case(suite, report, c):
    tc = ET.SubElement(suite, "testcase", classname=f"{report.assignment}.{c.question}", name=c.name)
    if c.where and not c.passed:  # GitLab and other JUnit readers link the student's line
        file, _, line = c.where.rpartition(":")
        tc.set("file", file)
        tc.set("line", line)
    first = c.output.splitlines()[0] if c.output else "failed"
    if _costs_points(c):
        ET.SubElement(tc, "failure", message=first).text = c.output
    elif not c.passed:  # an advisory: shown, never a failure (it costs nothing)
        ET.SubElement(tc, "skipped", message=f"{ADVISORY_TITLE}: {first}")
        ET.SubElement(tc, "system-out").text = _gradescope_output(c)


def junit_xml(report):
    """One testcase per case; failures are exactly the cases below their
    points (as in results.json), failed advisories are skipped with the advice."""
    suite = ET.Element(
        "testsuite",
        name=f"needle-{report.assignment}",
        tests=str(len(report.cases)),
        failures=str(sum(map(_costs_points, report.cases))),
        skipped=str(sum(not c.passed and not _costs_points(c) for c in report.cases)),
        time=f"{report.execution_time:.2f}",
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="sandbox_tier", value=report.tier)
    ET.SubElement(props, "property", name="score", value=fmt_points(report.score))
    for c in report.cases:
        _junit_case(suite, report, c)
    if report.error:
        ET.SubElement(suite, "system-err").text = report.error
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def score_table(report):
    """The per-question table printed by `grader grade`, Markdown-compatible."""
    lines = ["| question | cases passed | points |", "|---|---|---|"]
    for q in report.questions:
        lines.append(f"| {q.label} {q.key} | {q.passed}/{q.total} | {fmt_points(q.score)}/{q.max_score} |")
    lines.append(
        f"| total | {sum(q.passed for q in report.questions)}/{sum(q.total for q in report.questions)} "
        f"| {fmt_points(report.score)}/{report.max_score} |"
    )
    advisories = [c for c in report.cases if c.advisory]
    if advisories:
        lines.append(f"\n{ADVISORY_TITLE}: {sum(c.passed for c in advisories)}/{len(advisories)} cases passed.")
    return "\n".join(lines) + "\n"


def _case_lines(c):
    # Lines below the first (a `Likely cause:`) nest under the case, not run into it.
    first, *more = c.output.splitlines() or [""]
    lines = [f"- **{c.name}** ({c.number}): {first}", *(f"  - {line}" for line in more)]
    if c.contract:
        lines.append(f"  - {'goes beyond' if c.advisory else 'contract'}: {c.contract}")
    return lines


def _stub_line(cases, prefix=""):
    """Cases that stopped at handout stubs, folded into one line: how many, and which stubs."""
    stubs = list(dict.fromkeys(c.stub for c in cases))
    count = f"{len(cases)} case{'s' * (len(cases) != 1)}"
    return f"- {prefix}{count} not implemented yet (NotImplementedError): {', '.join(stubs)}"


def _failure_lines(cases, prefix=""):
    """One line per failed case (and its contract line), but one line for all
    the cases that stopped at a stub."""
    stubbed = [c for c in cases if c.stub]
    lines = [_stub_line(stubbed, prefix)] if stubbed else []
    for c in cases:
        if not c.stub:
            lines += _case_lines(c)
    return lines


def _question_section(report, q):
    """A question's failures: scored ones (they cost points) only; advisories come last."""
    failed = [c for c in report.cases if c.question == q.key and not c.passed and c.max_score > 0]
    if not failed:
        return []
    lines = [f"## {q.label} {q.key}: {fmt_points(q.score)}/{q.max_score} points\n"]
    blocked = [c for c in failed if c.blocked]
    if blocked:  # the import failure is in the notes above: said once, not once per case
        lines.append(f"- {len(blocked)} cases not run: the submission could not be imported (see above)")
    lines += _failure_lines([c for c in failed if not c.blocked])
    return lines + [""]


def markdown(report):
    """The student's report: table, then each question's scored failures, then advisories."""
    parts = [
        f"# needle {report.assignment}: {fmt_points(report.score)} / {report.max_score}\n",
        f"Submission `{PurePath(report.submission).name}`, sandbox tier `{report.tier}`, "
        f"{report.execution_time:.1f} s. Scoring: {MODE_NOTES[report.mode]}.\n",
    ]
    parts += [f"> {note}\n" for note in report.notes]
    if report.error:
        parts.append(f"**Grader error:** {report.error}\n")
    parts.append(score_table(report))
    for q in report.questions:
        parts += _question_section(report, q)
    beyond = [c for c in report.cases if c.advisory and not c.passed and c.max_score == 0 and not c.blocked]
    if beyond:
        parts.append(f"## {ADVISORY_TITLE}\n")
        parts.append(
            "These go past what the course's handout promises. They cost nothing, but "
            "fixing them makes your library sturdier.\n"
        )
        for q in report.questions:
            parts += _failure_lines([c for c in beyond if c.question == q.key], prefix=f"{q.label}: ")
    return "\n".join(parts).rstrip("\n") + "\n"
