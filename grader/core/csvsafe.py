"""Every CSV the project writes goes through here, so that no cell runs as a
formula when an instructor opens it in a spreadsheet.

A spreadsheet reads a cell that starts with `=`, `+`, `-` or `@` as a
formula (`=HYPERLINK(...)`, `@SUM(...)`, `=cmd|' /C calc'!A0`), and a
leading tab or carriage return can hide such a start. Names and reasons
come from students (a zip's file name, a user name), so `cell` prefixes
every such text with a single quote (OWASP's advice): the spreadsheet shows
it as text, quote included.

Numbers stay numbers. Only what the program produced as a number is left
as it is: an int or float, or a `Number` (the text of a finite number the
program formatted itself, e.g. a score "-1.50"). Any other text is
neutralised, whatever it looks like: a student named "-1" is a string and
is written "'-1". A `Number` is checked when made, so no formula can pass
as one.

No reader of the project's own reads these files back (a batch resumes
from its result folders' results.json, import-batch reads results.json, a
roster is the instructor's input), so nothing has to undo the quote. A
future reader that does must strip one leading `'` before one of
DANGEROUS.

grader/shipped/ imports nothing from grader and writes no CSV.
"""

import csv
import io
import math

DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


class Number(str):
    """The text of a finite number the program formatted itself (a score, a
    total): written as it is. Refuses any text that is not such a number."""

    def __new__(cls, text: str):
        value = float(text)  # ValueError for anything that is not a number's text
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {text!r}")
        return super().__new__(cls, text)


def cell(value):
    """The value to write for one CSV cell: numbers (int, float, Number) as
    they are, anything else as text, with a `'` before a leading
    `=`, `+`, `-`, `@`, tab or carriage return."""
    if isinstance(value, Number) or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ):
        return value
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(DANGEROUS) else text


def render(rows) -> str:
    """The CSV text of `rows` (header included), every cell through `cell`,
    lines ended by "\\n"."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([cell(v) for v in row] for row in rows)
    return buffer.getvalue()
