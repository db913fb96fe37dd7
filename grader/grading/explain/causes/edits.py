"""Textual edits of the reference's student files, for the causes catalogue.

Each edit fails loudly when its anchor is gone, so that a change to the
reference shows up as "update this catalogue entry", never as a mutant that
silently differs from the bug its message names. The tests' catalogue of
mutant submissions uses the same edits, naming its own folder.
"""

import textwrap
from dataclasses import dataclass

OPS = "python/needle/ops/ops_mathematic.py"
BEGIN, END = "### BEGIN YOUR SOLUTION", "### END YOUR SOLUTION"
WHERE = "grader/grading/explain/causes/catalogue.py"


class AnchorError(RuntimeError):
    """A catalogue edit no longer matches the reference."""


@dataclass(frozen=True)
class Body:
    """The solution region of `function` ("Class.method" or a module-level
    name) in `file` becomes `code`, indented like the markers."""

    file: str
    function: str
    code: str
    catalogue: str = WHERE  # what the error names when the anchor is gone

    def apply(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        start = _find_def(lines, self.function, self.file, self.catalogue)
        begin = next((i for i in range(start, len(lines)) if lines[i].strip() == BEGIN), None)
        end = (
            next((i for i in range(begin, len(lines)) if lines[i].strip() == END), None) if begin is not None else None
        )
        if begin is None or end is None or _another_def(lines, start, begin):
            raise AnchorError(
                f"{self.file}: no solution region in {self.function}; update its entry in {self.catalogue}"
            )
        indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
        body = textwrap.indent(textwrap.dedent(self.code).strip("\n") + "\n", indent)
        return "".join(lines[: begin + 1]) + body + "".join(lines[end:])


@dataclass(frozen=True)
class Append:
    """Module-level code added at the end of `file`."""

    file: str
    code: str

    def apply(self, text: str) -> str:
        return text.rstrip("\n") + "\n\n\n" + textwrap.dedent(self.code).strip("\n") + "\n"


def _find_def(lines, function, file, catalogue):
    *cls, name = function.split(".")
    lo = 0
    if cls:
        heads = [i for i, ln in enumerate(lines) if ln.startswith((f"class {cls[0]}(", f"class {cls[0]}:"))]
        if len(heads) != 1:
            raise AnchorError(f"{file}: class {cls[0]} found {len(heads)} times; update its entry in {catalogue}")
        lo = heads[0]
    for i in range(lo, len(lines)):
        if lines[i].lstrip().startswith(f"def {name}("):
            return i
        if cls and i > lo and lines[i].startswith(("class ", "def ")):
            break
    raise AnchorError(f"{file}: def {function} not found; update its entry in {catalogue}")


def _another_def(lines, start, i):
    return any(ln.lstrip().startswith("def ") for ln in lines[start + 1 : i])


def apply_edits(sources: dict, edits, catalogue: str = WHERE) -> dict:
    """relative path -> text, with `edits` applied in order."""
    out = dict(sources)
    for edit in edits:
        if edit.file not in out:
            raise AnchorError(f"{edit.file}: not a student file; fix its entry in {catalogue}")
        out[edit.file] = edit.apply(out[edit.file])
    return out
