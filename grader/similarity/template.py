"""The handout's view of each student file: which functions hold a solution
block (what students write), the names it gives everyone (kept when
normalising), and each function's lines (what a student whose markers are
gone was given, so it does not count as theirs)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from grader.core.markers import BEGIN_SOLUTION, END_SOLUTION
from grader.similarity import tokens


def _lenient(marker: str) -> re.Pattern:
    """`### BEGIN YOUR SOLUTION` as students leave it: any number of `#`,
    any spacing and case, words after it."""
    words = marker.lstrip("#").split()
    return re.compile(r"#+\s*" + r"\s+".join(map(re.escape, words)) + r"\b", re.IGNORECASE)


SEP = "\x1f"  # between tokens in TemplateFile.token_text: no token contains it
OTHER = "other code"  # a file's lines the handout lacks, outside every graded function's code
BEGIN = _lenient(BEGIN_SOLUTION)


def is_other(block_id: str) -> bool:
    """Whether a block id names a file's other code (TemplateFile.other_id)."""
    return block_id.endswith(f":{OTHER}")


END = _lenient(END_SOLUTION)


class TemplateError(ValueError):
    """The handout cannot serve as the template; the message says where."""


@dataclass(frozen=True)
class TemplateFile:
    rel: str  # handout-relative path, e.g. python/needle/autograd.py
    known: frozenset  # names kept when normalising
    blocks: tuple  # qualnames of the functions holding a solution block, in file order
    given: dict  # qualname -> Counter of the function's stripped lines in the handout
    given_tokens: dict  # block qualname -> the handout's whole function, normalised (weighs nothing)
    file_lines: frozenset = frozenset()  # every stripped line of the handout's file
    line_tokens: frozenset = frozenset()  # every line's normalised tokens, as a tuple (layout and names aside)
    file_tokens: tuple = ()  # the handout's whole file, normalised (weighs nothing in other code)
    token_text: str = SEP  # those tokens joined by SEP and bounded by it, to find runs in

    @property
    def other_id(self) -> str:
        """The block of this file's code outside every graded function."""
        return f"{self.rel}:{OTHER}"


@dataclass(frozen=True)
class Template:
    files: tuple  # TemplateFile, in the assignment's student_files order

    def block_id(self, rel: str, qualname: str) -> str:
        """How a block is named in reports: its qualname, with its file when
        two student files hold a block of the same name."""
        clash = sum(qualname in f.blocks for f in self.files) > 1
        return f"{rel}:{qualname}" if clash else qualname

    def block_ids(self) -> tuple:
        """Every graded function's block, then each file's other code."""
        return tuple(self.block_id(f.rel, q) for f in self.files for q in f.blocks) + tuple(
            f.other_id for f in self.files
        )


def marker_lines(scanned: tokens.Scanned) -> list:
    """(line, "begin" | "end") of each solution marker comment, in order."""
    found = []
    for tok in scanned.tokens:
        if tok.kind == tokens.tokenize.COMMENT:
            if BEGIN.match(tok.text):
                found.append((tok.line, "begin"))
            elif END.match(tok.text):
                found.append((tok.line, "end"))
    return found


def innermost(scopes, line: int):
    """The innermost scope holding `line` (None at module level)."""
    holding = [s for s in scopes if s.first <= line <= s.last]
    return max(holding, key=lambda s: s.first) if holding else None


def read_template_file(handout: Path, rel: str) -> TemplateFile:
    path = handout / rel
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"{path}: cannot read the handout's file ({exc}); run `grader handout`") from None
    try:
        scanned = tokens.scan(text, str(path))
    except tokens.SourceError as exc:
        raise TemplateError(f"{exc}; the handout must be valid Python: run `grader handout`") from None
    blocks = []
    for line, kind in marker_lines(scanned):
        scope = innermost(scanned.scopes, line)
        if kind == "begin" and scope is not None and scope.qualname not in blocks:
            blocks.append(scope.qualname)
    given = {s.qualname: Counter(ln.strip() for ln in scanned.lines[s.first - 1 : s.last]) for s in scanned.scopes}
    known = tokens.module_names(scanned)
    normalised = tokens.normalise(scanned, known)
    scopes = {s.qualname: s for s in scanned.scopes}
    given_tokens = {q: tuple(t for t in normalised if scopes[q].first <= t[1] <= scopes[q].last) for q in blocks}
    return TemplateFile(
        rel,
        known,
        tuple(blocks),
        given,
        given_tokens,
        frozenset(ln.strip() for ln in scanned.lines),
        line_token_set(normalised),
        normalised,
        SEP + SEP.join(t for t, _ in normalised) + SEP,
    )


def line_token_set(normalised) -> frozenset:
    """Each line's normalised tokens as a tuple (a line is the line of its tokens)."""
    by_line = {}
    for tok, line in normalised:
        by_line.setdefault(line, []).append(tok)
    return frozenset(tuple(t) for t in by_line.values())


def load_template(handout: Path, student_files) -> Template:
    """The template of every student file; TemplateError if none holds a block."""
    files = tuple(read_template_file(Path(handout), rel) for rel in student_files)
    if not any(f.blocks for f in files):
        raise TemplateError(
            f"{handout}: no `{BEGIN_SOLUTION}` marker in {', '.join(student_files)}; "
            "pass the handout folder the students were given"
        )
    return Template(files)
