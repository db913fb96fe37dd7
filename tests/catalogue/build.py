"""Build catalogue submissions: the reference's three student files with
edits applied, written as a handout-shaped folder.

Three kinds of edit, all failing loudly when their anchor is gone so that a
change to the reference shows up as "update this mutant", never as a
silently different submission:

- Replace(file, old, new): `old` must occur exactly once in the file.
- Body(file, function, code): the solution region (between `### BEGIN YOUR
  SOLUTION` and `### END YOUR SOLUTION`) of `function` ("Class.method" or a
  module-level name) becomes `code`, re-indented at the marker's level.
  Bodies are ours, so they survive any rewrite of the reference's own.
- Append(file, code): code added at the end of the file (module level).

Body and Append are the likely-cause catalogue's (grader/grading/explain/causes/edits.py).
"""
from dataclasses import dataclass
from pathlib import Path

from grader import REFERENCE
from grader.grading.explain.causes import edits
from grader.grading.explain.causes.edits import BEGIN, END, AnchorError, Append  # noqa: F401  (the catalogue's edits)

AUTOGRAD = "python/needle/autograd.py"
OPS = "python/needle/ops/ops_mathematic.py"
SIMPLE_ML = "apps/simple_ml.py"
FILES = (AUTOGRAD, OPS, SIMPLE_ML)
CATALOGUE = "tests/catalogue/"  # what a stale anchor's error names


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
class Body(edits.Body):
    """The likely-cause catalogue's edit, its errors naming this catalogue."""
    catalogue: str = CATALOGUE


def reference_sources():
    return {rel: (REFERENCE / rel).read_text() for rel in FILES}


def apply_edits(sources, changes):
    return edits.apply_edits(sources, changes, CATALOGUE)


def write_submission(dest: Path, sources, extra_files=None):
    """A handout-shaped folder with the three files (and any extra files,
    which the grader must ignore)."""
    for rel, text in {**sources, **(extra_files or {})}.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return dest
