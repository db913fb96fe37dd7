"""Gradebook exports an LMS imports as they are: points (not percent), one
column per assignment, each student identified by e-mail and, when the
roster gives one, a student (SIS) ID.

- Canvas (Gradebook > Import): the columns Canvas's own export has,
  `Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section`, then one per
  assignment, and a `Points Possible` row; Canvas matches a row by its IDs,
  so every student needs a student ID (`SIS User ID`).
- Moodle (Grade administration > Import > CSV file): `Email address` and
  `ID number` (either can be mapped as "Identify user by"), then one column
  per grade item.
- plain: name, e-mail, student ID, points per assignment, total and maximum.

A question's points are its score times its weight; an assignment's are
the sum over its questions, so the totals add up to the gradebook's; an
assignment with a submission that needs attention is left empty (no grade,
not a 0) until it is graded. The
writers are pure functions of a Gradebook and the people; an export that
cannot identify every student is refused (ExportError), never partial.
"""

import csv
from dataclasses import dataclass
from pathlib import Path

from grader.core import csvsafe, settings

FORMATS = settings.EXPORT_FORMATS  # percent: scores.to_csv, the gradebook as it shows
STUDENT_ID = "student_id"  # the roster column that carries a student's (SIS) ID


class ExportError(ValueError):
    """An export that cannot be written as the LMS needs it; the message names who and the fix."""


@dataclass(frozen=True)
class Person:
    name: str
    email: str = ""
    student_id: str = ""


def _points(value) -> str:
    """Points as a number; None (a submission that needs attention) as an empty cell: no grade, not 0."""
    return "" if value is None else csvsafe.Number(f"{value:.2f}")


def assignment_points(book) -> tuple:
    """(assignments in order, their maximum points, {student: points per assignment}); an
    assignment with a question that needs attention has None: the LMS gets no grade, not a 0."""
    names = list(dict.fromkeys(q.assignment for q in book.questions))
    maxima = [sum(q.weight for q in book.questions if q.assignment == a) for a in names]
    per = {}
    for row in book.rows:
        got = dict.fromkeys(names, 0.0)
        for q, c in zip(book.questions, row.cells):
            if c.attention or got[q.assignment] is None:
                got[q.assignment] = None
            else:
                got[q.assignment] += q.weight * (c.score or 0.0)
        per[row.name] = [got[a] for a in names]
    return names, maxima, per


def _missing(book, people: dict, need) -> list:
    return [r.name for r in book.rows if not need(people.get(r.name, Person(r.name)))]


def canvas_csv(book, people: dict) -> str:
    missing = _missing(book, people, lambda p: p.student_id)
    if missing:
        raise ExportError(
            f"--format canvas: no student ID for {', '.join(missing)}; Canvas matches rows by "
            f"SIS User ID: store it on their account (grader users import ROSTER with a {STUDENT_ID} "
            f"column, or users add --student-id) or give --roster FILE with that column"
        )
    names, maxima, per = assignment_points(book)
    lines = [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + names,
        ["Points Possible", "", "", "", ""] + [_points(m) for m in maxima],
    ]
    for row in book.rows:
        p = people[row.name]
        lines.append([row.name, "", p.student_id, "", ""] + [_points(v) for v in per[row.name]])
    return csvsafe.render(lines)


def moodle_csv(book, people: dict) -> str:
    missing = _missing(book, people, lambda p: p.email or p.student_id)
    if missing:
        raise ExportError(
            f"--format moodle: no e-mail or student ID for {', '.join(missing)}; Moodle identifies "
            f"a user by either: add their e-mail (grader users import) or a {STUDENT_ID} column "
            "in --roster FILE"
        )
    names, _, per = assignment_points(book)
    lines = [["Email address", "ID number"] + names]
    for row in book.rows:
        p = people.get(row.name, Person(row.name))
        lines.append([p.email, p.student_id] + [_points(v) for v in per[row.name]])
    return csvsafe.render(lines)


def plain_csv(book, people: dict) -> str:
    names, maxima, per = assignment_points(book)
    lines = [["name", "email", STUDENT_ID] + names + ["total", "max"]]
    for row in book.rows:
        p = people.get(row.name, Person(row.name))
        lines.append(
            [row.name, p.email, p.student_id]
            + [_points(v) for v in per[row.name]]
            + [_points(sum(v for v in per[row.name] if v is not None)), _points(sum(maxima))]
        )
    return csvsafe.render(lines)


WRITERS = {"plain": plain_csv, "canvas": canvas_csv, "moodle": moodle_csv}


def read_ids(path: Path) -> dict:
    """name -> student ID from a roster CSV's `name` and `student_id` columns (other columns ignored)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "name" not in reader.fieldnames or STUDENT_ID not in reader.fieldnames:
                raise ExportError(f"--roster {path}: needs a header line with 'name' and '{STUDENT_ID}' columns")
            ids = {}
            for line, row in enumerate(reader, start=2):
                name, sid = (row.get("name") or "").strip(), (row.get(STUDENT_ID) or "").strip()
                if not name:
                    raise ExportError(f"--roster {path}:{line}: 'name' is empty; give the student's name")
                if sid:
                    ids[name] = sid
            return ids
    except OSError as e:
        raise ExportError(f"--roster {path}: cannot read it ({e.strerror})") from None
    except UnicodeDecodeError:
        raise ExportError(f"--roster {path}: not UTF-8 text; save it as CSV UTF-8") from None
