"""A submission's solution blocks: per function the handout leaves to the
student, the lines they wrote there, as normalised tokens.

Found by the handout's markers inside the function of that name (so a
block moved to another place in the file, or functions reordered, still
match). Where a student damaged them:

- one marker of a pair left: from BEGIN to the function's end, or from the
  function's header to END;
- no marker left: the whole function, matched by name;

and in both cases a line the handout's function already has (its
docstring, its given lines) does not count. Each such block gets a note.
A function defined twice counts as its last definition (as Python runs it).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from grader.similarity import tokens
from grader.similarity.template import Template, TemplateFile, marker_lines

MARKERS, PARTIAL, BY_NAME = "markers", "damaged markers", "function name"
PARTIAL_NOTE = ("{where}: one solution marker is missing; the block runs to the function's "
                "{side}, and only lines that differ from the handout count")
BY_NAME_NOTE = ("{where}: solution markers missing; matched by function name against the handout "
                "(only lines that differ from it count)")


@dataclass(frozen=True)
class Block:
    id: str          # the template's name for it, e.g. "EWiseDiv.gradient"
    file: str        # handout-relative path of the student file
    lines: tuple     # line numbers of the student's file whose tokens count
    how: str         # MARKERS, PARTIAL or BY_NAME
    tokens: tuple    # (normalised token, line) pairs


def _pairs(marks):
    """Inner line ranges of well-formed BEGIN/END pairs, and whether all were."""
    ranges, open_at, intact = [], None, True
    for line, kind in marks:
        if kind == "begin":
            intact = intact and open_at is None
            open_at = line if open_at is None else open_at
        elif open_at is None:
            intact = False
        else:
            ranges.append(range(open_at + 1, line))
            open_at = None
    return ranges, intact and open_at is None and bool(ranges)


def _lines_of(scope, marks):
    """(candidate lines, how, side) for one function of the student's file."""
    ranges, intact = _pairs(marks)
    if intact:
        return sorted({n for r in ranges for n in r}), MARKERS, ""
    body = range(scope.header_end + 1, scope.last + 1)
    if not marks:
        return list(body), BY_NAME, ""
    first, kind = marks[0]
    if kind == "begin":
        return [n for n in body if n > first], PARTIAL, "end"
    return [n for n in body if n < marks[-1][0]], PARTIAL, "header"


def _not_given(lines, scanned, given: Counter):
    """The lines whose text the handout's function does not already have."""
    left, kept = Counter(given), []
    for n in lines:
        text = scanned.lines[n - 1].strip() if n <= len(scanned.lines) else ""
        if left[text] > 0:
            left[text] -= 1
        else:
            kept.append(n)
    return kept


def find_blocks(text: str, rel: str, tfile: TemplateFile, template: Template, where: str):
    """(blocks, notes) of one student file; tokens.SourceError if it does not
    tokenize. `where` prefixes the notes (the submission's name)."""
    scanned = tokens.scan(text, rel)
    by_line = defaultdict(list)
    for tok, line in tokens.normalise(scanned, tfile.known):
        by_line[line].append((tok, line))
    scopes = {s.qualname: s for s in scanned.scopes}  # the last definition wins
    marks = marker_lines(scanned)
    blocks, notes, missing = [], [], []
    for qualname in tfile.blocks:
        scope = scopes.get(qualname)
        if scope is None:
            missing.append(qualname)
            continue
        inside = [m for m in marks if scope.header_end < m[0] <= scope.last]
        lines, how, side = _lines_of(scope, inside)
        if how != MARKERS:
            lines = _not_given(lines, scanned, tfile.given.get(qualname, Counter()))
            note = BY_NAME_NOTE if how == BY_NAME else PARTIAL_NOTE
            label = f"{where}: {rel}: {qualname}"
        found = tuple(t for n in lines for t in by_line.get(n, ()))
        if found:
            blocks.append(Block(template.block_id(rel, qualname), rel, tuple(lines), how, found))
            if how != MARKERS:
                notes.append(note.format(where=label, side=side))
    if missing:
        notes.append(f"{where}: {rel}: no function {', '.join(missing)}: left out")
    return blocks, notes
