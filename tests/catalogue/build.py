"""Build catalogue submissions: the reference's three student files with
edits applied, written as a handout-shaped folder.

Two kinds of edit, both failing loudly when their anchor is gone so that a
change to the reference shows up as "update this mutant", never as a
silently different submission:

- Replace(file, old, new): `old` must occur exactly once in the file.
- Body(file, function, code): the solution region (between `### BEGIN YOUR
  SOLUTION` and `### END YOUR SOLUTION`) of `function` ("Class.method" or a
  module-level name) becomes `code`, re-indented at the marker's level.
  Bodies are ours, so they survive any rewrite of the reference's own.
- Append(file, code): code added at the end of the file (module level).
"""
import textwrap
from dataclasses import dataclass
from pathlib import Path

from grader import REFERENCE

AUTOGRAD = "python/needle/autograd.py"
OPS = "python/needle/ops/ops_mathematic.py"
SIMPLE_ML = "apps/simple_ml.py"
FILES = (AUTOGRAD, OPS, SIMPLE_ML)
BEGIN, END = "### BEGIN YOUR SOLUTION", "### END YOUR SOLUTION"


class AnchorError(AssertionError):
    """A catalogue edit no longer matches the reference: update the entry."""


@dataclass(frozen=True)
class Replace:
    file: str
    old: str
    new: str

    def apply(self, text):
        count = text.count(self.old)
        if count != 1:
            raise AnchorError(f"{self.file}: the text to replace occurs {count} times, expected once; "
                              f"update the catalogue entry (look at `git log -p reference/`):\n{self.old}")
        return text.replace(self.old, self.new)


@dataclass(frozen=True)
class Body:
    file: str
    function: str
    code: str

    def apply(self, text):
        lines = text.splitlines(keepends=True)
        start = _find_def(lines, self.function, self.file)
        begin = next((i for i in range(start, len(lines)) if lines[i].strip() == BEGIN), None)
        if begin is None or _is_def(lines, begin, start):
            raise AnchorError(f"{self.file}: no `{BEGIN}` in {self.function}; update the catalogue entry")
        end = next((i for i in range(begin, len(lines)) if lines[i].strip() == END), None)
        if end is None:
            raise AnchorError(f"{self.file}: unterminated solution region in {self.function}")
        indent = lines[begin][:len(lines[begin]) - len(lines[begin].lstrip())]
        body = textwrap.indent(textwrap.dedent(self.code).strip("\n") + "\n", indent)
        return "".join(lines[:begin + 1]) + body + "".join(lines[end:])


@dataclass(frozen=True)
class Append:
    file: str
    code: str

    def apply(self, text):
        return text.rstrip("\n") + "\n\n\n" + textwrap.dedent(self.code).strip("\n") + "\n"


def _find_def(lines, function, file):
    """Index of the `def` line of "Class.method" or "function"."""
    *cls, name = function.split(".")
    lo = 0
    if cls:
        heads = [i for i, l in enumerate(lines) if l.startswith(f"class {cls[0]}(") or l.startswith(f"class {cls[0]}:")]
        if len(heads) != 1:
            raise AnchorError(f"{file}: class {cls[0]} found {len(heads)} times; update the catalogue entry")
        lo = heads[0]
    for i in range(lo, len(lines)):
        stripped = lines[i].lstrip()
        if stripped.startswith(f"def {name}("):
            return i
        if cls and i > lo and lines[i].startswith(("class ", "def ")):
            break
    raise AnchorError(f"{file}: def {function} not found; update the catalogue entry")


def _is_def(lines, i, start):
    """True when another def starts between the function's def and line i."""
    return any(l.lstrip().startswith("def ") for l in lines[start + 1:i])


def reference_sources():
    return {rel: (REFERENCE / rel).read_text() for rel in FILES}


def apply_edits(sources, edits):
    out = dict(sources)
    for edit in edits:
        if edit.file not in out:
            raise AnchorError(f"unknown student file {edit.file}")
        out[edit.file] = edit.apply(out[edit.file])
    return out


def write_submission(dest: Path, sources, extra_files=None):
    """A handout-shaped folder with the three files (and any extra files,
    which the grader must ignore)."""
    for rel, text in {**sources, **(extra_files or {})}.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return dest
