"""OUTDIR/gradebook.csv of a batch: one row per submission, one column per
question, the total, and the reason for every submission that was not
graded or that the grader refused or failed on.

Rows are built from each result folder's results.json (so a resumed batch
keeps the earlier submissions) and kept in memory while a batch runs; the
file is rewritten atomically after each result, so it is complete up to the
last submission that finished, whatever stops the batch.

Submission names and reasons come from students (a zip's file name): the
file is written by grader.core.csvsafe, so `=HYPERLINK(...).zip` shows as text in
a spreadsheet; scores are csvsafe.Number cells, written as they are.
"""

import json
from pathlib import Path

from grader.core import csvsafe
from grader.core.files import write_atomic
from grader.grading.batch.names import GRADEBOOK
from grader.grading.report import results as report
from grader.grading.report.writing import RESULTS

PENDING = "not graded yet: the batch is running, or stopped before it (run grade-batch again)"


def header(questions) -> list:
    """One column per question and the total, the reason, then what was graded: the student files' sha256 and, for
    a git submission, its commit (from the result's provenance): the commit when the submission's own git objects
    hold it and the graded files, `claimed:<commit>` when they do not (provenance.checked_commit)."""
    return ["submission", *(q.key for q in questions), "total", "reason", "submission_sha256", "commit"]


def _one_line(text: str) -> str:
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def row_from_results(name: str, doc: dict, questions) -> list:
    """A gradebook row from a parsed results.json. A submission with no case
    (refused, or the grader failed) gets its reason from the report's output,
    whose first line is the score header."""
    found = doc.get("extra_data", {}).get("questions", {})
    scores = [csvsafe.Number(report.fmt_points(float(found.get(q.key, {}).get("score", 0.0)))) for q in questions]
    reason = ""
    if not doc.get("tests"):
        reason = _one_line("\n".join(str(doc.get("output", "")).splitlines()[1:])) or "no case was run"
    found = doc.get("extra_data", {}).get("provenance", {})
    graded = [str(found.get(k, "")) for k in ("submission_sha256", "git_commit")]
    return [name, *scores, csvsafe.Number(report.fmt_points(float(doc.get("score", 0.0)))), reason, *graded]


def ungraded_row(name: str, reason: str, questions) -> list:
    """No score at all (blank cells, not 0): the submission has no results."""
    return [name, *([""] * (len(questions) + 1)), _one_line(reason), "", ""]


def read_row(folder: Path, questions):
    """The row for a result folder; None if it holds no results.json."""
    try:
        text = (folder / RESULTS).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return ungraded_row(
            folder.name, f"not graded: {RESULTS} unreadable ({exc}); run grade-batch --force", questions
        )
    try:
        return row_from_results(folder.name, json.loads(text), questions)
    except (ValueError, TypeError, AttributeError) as exc:
        return ungraded_row(
            folder.name, f"not graded: {RESULTS} is not valid ({exc}); run grade-batch again to regrade it", questions
        )


def render(rows: dict, questions) -> str:
    """The CSV text, rows sorted by submission name (pure)."""
    return csvsafe.render([header(questions), *(rows[name] for name in sorted(rows))])


class BatchGradebook:
    """The rows of one output folder, rewritten to disk as results arrive;
    one column per question of the registry's `questions`."""

    def __init__(self, out_root: Path, questions):
        self.out_root, self.questions = Path(out_root), tuple(questions)
        self.rows = {}
        for folder in sorted(p for p in self.out_root.iterdir() if p.is_dir() and not p.is_symlink()):
            row = read_row(folder, self.questions)
            if row is not None:
                self.rows[folder.name] = row

    def pending(self, names) -> None:
        for name in names:
            self.rows[name] = ungraded_row(name, PENDING, self.questions)

    def graded(self, name: str) -> None:
        """Take the row from the submission's freshly written results.json."""
        self.rows[name] = read_row(self.out_root / name, self.questions) or ungraded_row(
            name, f"not graded: the grader wrote no {RESULTS}", self.questions
        )

    def ungraded(self, name: str, reason: str) -> None:
        self.rows[name] = ungraded_row(name, reason, self.questions)

    def write(self) -> Path:
        path = self.out_root / GRADEBOOK
        write_atomic(path, render(self.rows, self.questions))
        return path
