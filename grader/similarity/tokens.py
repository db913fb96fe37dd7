"""A Python file read as tokens (the standard `tokenize` module: never
compiled, imported or run), the line range of each def and class, and the
normalised token stream that fingerprints are taken from.

Normalising keeps what a copier rarely changes and drops what they do:
keywords, operators, attribute names (`.reshape`, `.inputs`) and the names
the handout gives everyone (`array_api`, `summation`, `ndl`, builtins) stay
as they are; every other name (the ones a student chose, so the ones a
copier renames) becomes `V`, every number `#` and every string `"`;
comments, blank lines and line breaks inside brackets are dropped, a
statement's end is `;` however it was written, and a trailing comma before
a closing bracket (a formatter's) is dropped. `raise NotImplementedError`
statements (the handout's stubs, in any course's wording) are dropped too.

Changing any of this changes every fingerprint: bump NORMALISATION then.
"""

from __future__ import annotations

import builtins
import io
import keyword
import tokenize
from dataclasses import dataclass
from typing import NamedTuple

NORMALISATION = "tokens-v1"  # recorded with the fingerprints: a change makes old ones incomparable
NAME_MARK, NUMBER_MARK, STRING_MARK, END_MARK = "V", "#", '"', ";"
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
CLOSERS = {")", "]", "}"}
# f-strings are one STRING token before Python 3.12 and a run of tokens
# from 3.12: both normalise to one string mark, so fingerprints do not
# depend on the Python version that took them.
FSTRING_START = getattr(tokenize, "FSTRING_START", None)
FSTRING_END = getattr(tokenize, "FSTRING_END", None)
ALWAYS_KNOWN = frozenset(dir(builtins)) | {"self", "cls"}


class SourceError(ValueError):
    """A file that cannot be read as Python tokens: `path:line: reason`."""


class Token(NamedTuple):  # a tuple, not a dataclass: files have thousands, made fast
    kind: int
    text: str
    line: int


@dataclass(frozen=True)
class Scope:
    """A def or class: where it starts, where its header (the `:` line)
    ends, and the last line of its body (trailing comments included)."""

    qualname: str
    first: int
    header_end: int
    last: int


@dataclass(frozen=True)
class Scanned:
    tokens: tuple  # Token, in file order
    scopes: tuple  # Scope of every def and class, in order of their first line
    lines: tuple  # the file's lines without line endings (line n is lines[n - 1])


def _raw_tokens(text: str, path: str):
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except tokenize.TokenError as exc:
        message, (line, _) = exc.args
        raise SourceError(f"{path}:{line}: cannot be read as Python ({message})") from None
    except (IndentationError, SyntaxError) as exc:
        raise SourceError(f"{path}:{exc.lineno or 1}: cannot be read as Python ({exc.msg})") from None


class _Scopes:
    """Def and class ranges from the token stream: a header opens a scope at
    the INDENT after it; the DEDENT back to its depth closes it."""

    def __init__(self):
        self.open, self.done = [], []  # open: [qualname, depth, first, header_end]
        self.depth, self.last_line = 0, 0
        self.line_start, self.header, self.waiting = True, None, None

    def feed(self, tok):
        kind, text, line = tok.type, tok.string, tok.start[0]
        if kind == tokenize.INDENT:
            self.depth += 1
            if self.waiting:
                self.open.append([self.waiting[0], self.depth, self.waiting[1], self.waiting[2]])
                self.waiting = None
            return
        if kind in (tokenize.DEDENT, tokenize.ENDMARKER) or (
            self.waiting and kind not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
        ):
            self._one_line()
        if kind == tokenize.DEDENT:
            self.depth -= 1
            self._close_deeper()
            return
        if kind not in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER):
            self.last_line = tok.end[0]
        elif kind == tokenize.COMMENT:
            self.last_line = line
        self._header(kind, text, line)

    def _header(self, kind, text, line):
        if kind == tokenize.NAME and self.line_start and text in ("def", "class"):
            self.header = [None, line]
        elif kind == tokenize.NAME and self.header and self.header[0] is None:
            self.header[0] = f"{self.open[-1][0]}.{text}" if self.open else text
        elif kind == tokenize.NEWLINE and self.header:
            self.waiting, self.header = (self.header[0], self.header[1], line), None
        if kind not in (tokenize.COMMENT, tokenize.NL):
            self.line_start = kind == tokenize.NEWLINE or (
                kind == tokenize.NAME and text == "async" and self.line_start
            )

    def _one_line(self):
        """A header followed by no indented body (`def f(): return 1`)."""
        if self.waiting:
            name, first, header_end = self.waiting
            self.done.append(Scope(name, first, header_end, header_end))
            self.waiting = None

    def _close_deeper(self):
        while self.open and self.open[-1][1] > self.depth:
            name, _, first, header_end = self.open.pop()
            self.done.append(Scope(name, first, header_end, self.last_line))

    def finish(self):
        self.depth = -1
        self._close_deeper()
        return tuple(sorted(self.done, key=lambda s: (s.first, -s.last)))


def scan(text: str, path: str) -> Scanned:
    """The tokens and scopes of a file; SourceError if it does not tokenize."""
    raw = _raw_tokens(text, path)
    scopes = _Scopes()
    for tok in raw:
        scopes.feed(tok)
    tokens = tuple(Token(t.type, t.string, t.start[0]) for t in raw)
    return Scanned(tokens, scopes.finish(), source_lines(text))


def source_lines(text: str) -> tuple:
    """The lines as tokenize numbers them: split at "\n" only (str.splitlines
    also splits at form feeds and other separators, which would shift
    every line number after one)."""
    return tuple(line.rstrip("\r") for line in text.split("\n"))


def normalise(scanned: Scanned, known: frozenset) -> tuple:
    """(normalised token, line) pairs of the whole file, in order (see the
    module's docstring); a block takes those on its lines. Builtins are
    always known."""
    known = known | ALWAYS_KNOWN
    out, previous, fstring_depth, statement, stub = [], "", 0, 0, False
    for tok in scanned.tokens:
        if fstring_depth:
            fstring_depth += (tok.kind == FSTRING_START) - (tok.kind == FSTRING_END)
            continue
        if tok.kind in SKIPPED:
            continue
        text = _mark(tok, previous, known)
        if tok.kind == FSTRING_START:
            fstring_depth = 1
        if text in CLOSERS and len(out) > statement and out[-1][0] == ",":
            out.pop()
        if len(out) == statement + 1 and out[-1][0] == "raise" and tok.text == "NotImplementedError":
            stub = True  # a stub statement: dropped when it ends
        out.append((text, tok.line))
        if text in (END_MARK, ":"):
            if stub:
                del out[statement:]
                stub = text != END_MARK
            statement = len(out)
        previous = tok.text
    return tuple(out)


def _mark(tok: Token, previous: str, known: frozenset) -> str:
    if tok.kind == tokenize.NAME:
        if keyword.iskeyword(tok.text) or previous == "." or tok.text in known:
            return tok.text
        return NAME_MARK
    if tok.kind == tokenize.NUMBER:
        return NUMBER_MARK
    if tok.kind == tokenize.STRING or tok.kind == FSTRING_START:
        return STRING_MARK
    if tok.kind == tokenize.NEWLINE or tok.text == ";":
        return END_MARK
    return tok.text


def module_names(scanned: Scanned) -> frozenset:
    """Names a template gives everyone: every name on a line outside all
    functions (imports, classes' and module-level assignments, def and
    class lines' own names), and the builtins."""
    in_function = set()
    for scope in scanned.scopes:
        if scope.qualname and _is_function(scanned, scope):
            in_function.update(range(scope.first, scope.last + 1))
    names = {t.text for t in scanned.tokens if t.kind == tokenize.NAME and t.line not in in_function}
    names |= {s.qualname.rsplit(".", 1)[-1] for s in scanned.scopes}
    return frozenset(n for n in names if not keyword.iskeyword(n)) | ALWAYS_KNOWN


def _is_function(scanned: Scanned, scope: Scope) -> bool:
    head = scanned.lines[scope.first - 1].lstrip()
    return head.startswith(("def ", "async def "))
