"""The class gradebook: server submissions and imported grade-batch results alike.

A question's score is its best (or, as its policy says, last) counted
attempt (server: fraction of its cases correct, each submission against the
publication it started on; imported: the grader's points over the maximum).
Which channels count is the assignment's policy in force (policy.py): by
default an imported sandboxed grade, once the assignment has one, and the
server's cases are practice (`Cell.practice`); each cell names the source
and submission that produced it. A case answered after the deadline is
late, whenever its submission started (each question has its own deadline):
`on_time` is the best score counting on-time answers only, and a cell is
flagged late when late answers raised the score above it. The total is the
weighted mean of question scores, in percent; `on_time_total` the same of the
on-time scores. A question's points are its score times its weight.
Everything here is a pure function of the records `load` reads, so
it is tested without a server.
"""

import datetime as dt
import statistics
from dataclasses import dataclass, field, replace
from typing import Optional

from sqlalchemy.engine import Connection

from grader.core import csvsafe
from grader.core.assignment import Policy

from . import case_counts, load, policy

BINS = ("0-19%", "20-39%", "40-59%", "60-79%", "80-99%", "100%")
TIME = "%Y-%m-%d %H:%M UTC"


@dataclass(frozen=True)
class Cell:
    score: Optional[float]  # None: never submitted
    correct: int = 0
    total: int = 0
    late: bool = False
    # Best score from on-time answers alone (None: never submitted). Left out of
    # equality: it is derived from the same answers as `late`.
    on_time: Optional[float] = field(default=None, compare=False)
    # The score before a regrade replaced it (None: not regraded); the page marks the cell.
    previous: Optional[float] = field(default=None, compare=False)
    # Why the submission that stands here could not be graded ("": graded). Such a cell
    # "needs attention": its 0 is no score, and the page and CSVs say so apart from real zeros.
    attention: str = ""
    # What produced the score: the attempt's source ("server", "batch LABEL") and key
    # ("s<submission id>", "b<result id>"), under the policy in force; "" when none counts.
    source: str = field(default="", compare=False)
    submission: str = field(default="", compare=False)
    # The best score of attempts the policy does not count (the server's cases once a
    # sandboxed grade is the grade): practice, shown, never in a total. None: none.
    practice: Optional[float] = field(default=None, compare=False)
    # Judged at read time (timing.judge): the deadline in force for this student (late days
    # included), what the late rule took (0..1 of the question), the late days spent on it.
    due: Optional[dt.datetime] = field(default=None, compare=False)
    penalty: float = field(default=0.0, compare=False)
    late_days: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Row:
    name: str
    user_id: Optional[int]  # None: known only from imported results
    cells: tuple
    total: float
    last: Optional[dt.datetime]  # time of the last server submission, else of the last imported grading
    sources: tuple
    on_time_total: float = 0.0  # percent, from on-time answers only


@dataclass(frozen=True)
class CaseRate:
    name: str
    description: str
    source: str  # "server" or "batch"
    tried: int  # students who answered the case
    failed: int  # of those, students who never passed it

    @property
    def rate(self) -> float:
        return self.failed / self.tried if self.tried else 0.0


@dataclass(frozen=True)
class CaseGroup:
    """Cases that the same number of students tried and never passed (one empty
    submission makes every case of a question fail for one student: one group)."""

    failed: int
    tried: int
    cases: tuple  # CaseRate

    @property
    def rate(self) -> float:
        return self.failed / self.tried if self.tried else 0.0


@dataclass(frozen=True)
class QuestionStats:
    histogram: tuple  # counts per BINS, then the count never submitted
    submitted: int
    mean: Optional[float]
    median: Optional[float]
    cases: tuple  # CaseRate, most failed first

    @property
    def groups(self) -> tuple:
        return case_groups(self.cases)


@dataclass(frozen=True)
class Gradebook:
    questions: tuple  # load.Column
    rows: tuple
    stats: tuple  # QuestionStats per question
    times: tuple  # (assignment, deadline or None, tuple of server submission times)

    @property
    def max_points(self) -> float:
        return sum(q.weight for q in self.questions)


def best(attempts) -> Cell:
    if not attempts:
        return Cell(None)
    top = max(attempts, key=lambda a: (a.score, a.on_time, not a.attention))  # a graded 0 before an ungraded one
    on_time = max(a.on_time for a in attempts)
    return Cell(
        top.score,
        top.correct,
        top.total,
        late=on_time < top.score,
        on_time=on_time,
        previous=top.previous,
        attention=top.attention,
        source=top.source,
        submission=top.key,
        **_timing(attempts, top),
    )


def last(attempts) -> Cell:
    """The latest attempt stands, whatever an earlier one scored."""
    if not attempts:
        return Cell(None)
    top = max(attempts, key=lambda a: (a.when, a.key[0] == "b", int(a.key[1:])))
    return Cell(
        top.score,
        top.correct,
        top.total,
        late=top.on_time < top.score,
        on_time=top.on_time,
        previous=top.previous,
        attention=top.attention,
        source=top.source,
        submission=top.key,
        **_timing(attempts, top),
    )


def _timing(attempts, top) -> dict:
    return {"due": top.due, "penalty": top.penalty, "late_days": max(a.late_days for a in attempts)}


def counted(attempts, counts: str, pick: str, has_sandboxed: bool) -> Cell:
    """The cell under a question's policy: the counted channels' best or last attempt,
    the others' best score kept as practice."""
    channels = policy.counted_channels(counts, has_sandboxed)
    mine = [a for a in attempts if policy.channel(a.source) in channels]
    other = [a.score for a in attempts if policy.channel(a.source) not in channels]
    cell = (last if pick == "last" else best)(mine)
    return replace(cell, practice=max(other)) if other else cell


def build(conn: Connection, student: Optional[str] = None, attempts: Optional[list] = None) -> Gradebook:
    """The gradebook of every student, or of the one named `student`; `attempts`: theirs,
    when the caller has read them already (`load.attempts`)."""
    questions = load.questions(conn)
    people = load.students(conn)
    if student is not None:
        people = {student: people.get(student)}
    if attempts is None:
        attempts = load.attempts(conn, student, policy.advisory_cases(conn))
    counts = case_counts.case_counts(conn) if student is None else []
    notes = {**case_counts.server_case_notes(conn), **case_counts.batch_case_notes(conn)} if student is None else {}
    policies = policy.in_force(conn, {q.assignment for q in questions})
    return assemble(questions, people, attempts, counts, notes, policies, load.sandboxed_questions(conn))


def assemble(questions, people: dict, attempts, counts, notes, policies=None, sandboxed=None) -> Gradebook:
    """`policies`: assignment -> Policy (default: Policy()); `sandboxed`: the question labels
    with an imported (sandboxed) result of anyone (default: those among `attempts`)."""
    if sandboxed is None:
        sandboxed = {a.question for a in attempts if policy.channel(a.source) == policy.SANDBOXED}
    by_key, by_student = {}, {}
    for a in attempts:
        by_key.setdefault((a.student, a.question), []).append(a)
        by_student.setdefault(a.student, []).append(a)
    rules = {q.label: (policies or {}).get(q.assignment, Policy()).of(q.label.partition("/")[2]) for q in questions}
    weight = sum(q.weight for q in questions) or 1.0
    rows = []
    for name in sorted(people, key=lambda n: (n.casefold(), n)):
        mine = by_student.get(name, [])
        cells = tuple(
            counted(by_key.get((name, q.label), []), *rules[q.label], q.label in sandboxed) for q in questions
        )
        total = 100.0 * sum(q.weight * (c.score or 0.0) for q, c in zip(questions, cells)) / weight
        on_time = 100.0 * sum(q.weight * (c.on_time or 0.0) for q, c in zip(questions, cells)) / weight
        server = [a.when for a in mine if a.source == "server"]
        last = max(server or [a.when for a in mine], default=None)
        rows.append(
            Row(
                name,
                people[name],
                cells,
                round(total, 2),
                last,
                tuple(sorted({a.source for a in mine})),
                round(on_time, 2),
            )
        )
    by_question = {}
    for c in counts:
        by_question.setdefault(c.question, []).append(c)
    stats = tuple(
        question_stats([r.cells[i] for r in rows], q.label, by_question, notes) for i, q in enumerate(questions)
    )
    return Gradebook(tuple(questions), tuple(rows), stats, _times(questions, attempts))


def question_stats(cells, label: str, counts: dict, notes) -> QuestionStats:
    """Histogram, mean and median of the submitters' scores; `counts`: CaseCounts by question."""
    scores = [c.score for c in cells if c.score is not None]
    bins = [0] * (len(BINS) + 1)
    for c in cells:
        bins[-1 if c.score is None else _bin(c.score)] += 1
    return QuestionStats(
        tuple(bins),
        len(scores),
        statistics.fmean(scores) if scores else None,
        statistics.median(scores) if scores else None,
        _case_rates(label, counts, notes),
    )


def _bin(score: float) -> int:
    return len(BINS) - 1 if score >= 1.0 else min(int(score * 5), len(BINS) - 2)


def _case_rates(label: str, counts: dict, notes) -> tuple:
    """Per case: students who tried it and students who never passed it; most failed first."""
    rates = []
    for c in counts.get(label, ()):
        kind, ident = c.case
        default = (f"case {ident}", "") if kind == "server" else (ident, "")
        name, text = notes.get((label, ident), default)
        if kind == "server":
            name = f"case {ident}: {name}" if name != default[0] else name
        rates.append(CaseRate(name, text, kind, c.tried, c.tried - c.passed))
    order = {"server": 0, "batch": 1}
    return tuple(sorted(rates, key=lambda r: (-r.rate, -r.failed, order[r.source], _natural(r.name))))


def case_groups(rates) -> tuple:
    """CaseRates grouped by (failed, tried): the most failed group first, each in its given order."""
    groups = {}
    for r in rates:
        groups.setdefault((r.failed, r.tried), []).append(r)
    order = sorted(groups, key=lambda k: (-(k[0] / k[1] if k[1] else 0.0), -k[0], -k[1]))
    return tuple(CaseGroup(f, t, tuple(groups[(f, t)])) for f, t in order)


def _natural(name: str):
    """'case 10' after 'case 9'."""
    head, _, rest = name.partition(":")
    number = head.removeprefix("case ").strip()
    return (int(number), rest) if number.isdigit() else (1 << 30, name)


def _times(questions, attempts) -> tuple:
    """Per assignment: its last question's deadline and the times of its server submissions
    (imported results carry their grading time, which says nothing about when students worked)."""
    out = []
    for assignment in sorted({q.assignment for q in questions}):
        labels = {q.label for q in questions if q.assignment == assignment}
        deadline = max((q.deadline for q in questions if q.assignment == assignment and q.deadline), default=None)
        when = tuple(sorted(a.when for a in attempts if a.source == "server" and a.question in labels))
        if when:
            out.append((assignment, deadline, when))
    return tuple(out)


def to_csv(book: Gradebook, full: bool = False) -> str:
    """One row per student: name, one score column per question (percent), total, on-time
    total (percent, answers after a question's deadline left out), late questions, and the
    questions that need attention with the reason (their score cells stay empty: not a 0); `full`
    adds the time of the last submission and the sources. Written by grader.core.csvsafe: a
    name like '=HYPERLINK(...)' shows as text, scores stay numbers."""
    extra = ["last submission", "sources", "counted"] if full else []
    lines = [["name"] + [q.label for q in book.questions] + ["total", "on-time total", "late", NEEDS_ATTENTION] + extra]
    for row in book.rows:
        scores = ["" if c.score is None or c.attention else csvsafe.Number(f"{100 * c.score:.2f}") for c in row.cells]
        late = " ".join(q.label for q, c in zip(book.questions, row.cells) if c.late)
        more = (
            [row.last.strftime(TIME) if row.last else "", " ".join(row.sources), produced_by(book.questions, row.cells)]
            if full
            else []
        )
        totals = [csvsafe.Number(f"{row.total:.2f}"), csvsafe.Number(f"{row.on_time_total:.2f}")]
        lines.append([row.name] + scores + totals + [late, attention_text(book.questions, row.cells)] + more)
    return csvsafe.render(lines)


NEEDS_ATTENTION = "needs attention"


def produced_by(questions, cells) -> str:
    """'hw1/forward: batch out b3; hw1/p: server s12': which source and submission each score is from."""
    return "; ".join(f"{q.label}: {c.source} {c.submission}" for q, c in zip(questions, cells) if c.submission)


def attention_text(questions, cells) -> str:
    """'hw1/forward: refused: <reason>; ...' for the cells whose submission could not be graded."""
    return "; ".join(f"{q.label}: {c.attention}" for q, c in zip(questions, cells) if c.attention)
