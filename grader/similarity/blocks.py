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

What runs is followed, not only what the markers hold (bindings.py): a
graded function rebound to other code (`EWiseDiv.gradient = _mine`,
`setattr`, a decorator) is that code's body, a decorated one adds its
decorators' functions, and either adds the student's own functions they
call. Each of those asks for a look (a Flag), whatever it scores. The
lines of a file the handout lacks that no graded function's code holds
(helpers never called, module-level code) are one more block per file,
"other code", so that nothing a student wrote goes unfingerprinted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from grader.similarity import tokens
from grader.similarity.bindings import reached, read_bindings, running
from grader.similarity.template import SEP, Template, TemplateFile, marker_lines

MARKERS, PARTIAL, BY_NAME = "markers", "damaged markers", "function name"
REBOUND, OTHER_HOW = "rebinding", "lines the handout lacks"
JOINED = 12  # tokens from which a line is looked for inside the handout's token stream
REBOUND_FLAG = "{target} runs {sources} (bound at line {line} by {how}), not its own solution block"
DECORATED_FLAG = "{target} is decorated with the student's {sources}: what runs may not be its block"
TOO_DEEP_FLAG = "its code nests too deep to follow what runs for each graded function: read it"
DYNAMIC_FLAG = "line {line} binds names in a way only running it would tell: `{code}`"
PARTIAL_NOTE = (
    "{where}: one solution marker is missing; the block runs to the function's "
    "{side}, and only lines that differ from the handout count"
)
BY_NAME_NOTE = (
    "{where}: solution markers missing; matched by function name against the handout "
    "(only lines that differ from it count)"
)


@dataclass(frozen=True)
class Block:
    id: str  # the template's name for it, e.g. "EWiseDiv.gradient"
    file: str  # handout-relative path of the student file
    lines: tuple  # line numbers of the student's file whose tokens count
    how: str  # MARKERS, PARTIAL or BY_NAME
    tokens: tuple  # (normalised token, line) pairs
    breaks: tuple = ()  # indices in tokens where another function's (or run's) code starts

    def segments(self) -> tuple:
        """The token runs fingerprinted apart (one unless code came from several places)."""
        edges = (0, *self.breaks, len(self.tokens))
        return tuple(self.tokens[a:b] for a, b in zip(edges, edges[1:]))


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
    found = read_file(text, rel, tfile, template, where)
    return list(found.blocks), list(found.notes)


@dataclass(frozen=True)
class FileBlocks:
    blocks: tuple  # Block: the graded functions' code, then the file's other code
    notes: tuple  # how blocks were found where markers were damaged, functions missing
    flags: tuple  # why the file asks for a look whatever it scores (Flag)
    filled: int  # graded functions whose own solution block holds code


@dataclass(frozen=True)
class Flag:
    name: str  # the submission
    file: str
    reason: str


class _File:
    """One scanned student file: its tokens by line and its functions."""

    def __init__(self, text: str, rel: str, tfile: TemplateFile):
        self.scanned = tokens.scan(text, rel)
        self.tfile = tfile
        self.by_line = defaultdict(list)
        for tok, line in tokens.normalise(self.scanned, tfile.known):
            self.by_line[line].append((tok, line))
        self.scopes = {s.qualname: s for s in self.scanned.scopes}  # the last definition wins
        self.own = frozenset(q for q in self.scopes if q not in tfile.given)  # functions the handout lacks
        self.bindings = read_bindings(text, tfile.blocks)
        self.running = running(self.bindings, tfile.blocks)

    def span(self, source) -> range:
        """Every line of a function that runs (decorators and header too)."""
        first, last = self.bindings.spans.get(source, (0, -1)) if isinstance(source, str) else source[1:]
        return range(first, last + 1)

    def body(self, source, target: str) -> list:
        """The lines of a function (or lambda range) that runs for `target`,
        less the lines the handout's `target` already has."""
        if isinstance(source, tuple):
            lines = list(range(source[1], source[2] + 1))
        elif source in self.scopes:
            scope = self.scopes[source]
            lines = list(range(scope.header_end + 1, scope.last + 1)) or [scope.first]
        else:
            return []
        return _not_given(lines, self.scanned, self.tfile.given.get(target, Counter()))

    def given_line(self, n: int) -> bool:
        """Whether the handout has line n: its text, its tokens as one line, or
        (a long line, as a re-printer joins a statement) as a run of its tokens."""
        text = self.scanned.lines[n - 1].strip() if n <= len(self.scanned.lines) else ""
        toks = tuple(t for t, _ in self.by_line.get(n, ()))
        if text in self.tfile.file_lines or toks in self.tfile.line_tokens:
            return True
        return len(toks) >= JOINED and self.tfile.token_text.find(SEP + SEP.join(toks) + SEP) >= 0

    def block(self, bid: str, segments, how: str):
        """A Block of line segments (each fingerprinted apart), or None if no tokens."""
        lines, found, breaks, seen = [], [], [], set()
        for segment in segments:
            new = [n for n in dict.fromkeys(segment) if n not in seen]
            toks = [t for n in new for t in self.by_line.get(n, ())]
            if toks:
                breaks.append(len(found))
                found.extend(toks)
                lines.extend(new)
                seen.update(new)
        if not found:
            return None
        return Block(bid, self.tfile.rel, tuple(lines), how, tuple(found), tuple(breaks[1:]))


def _own_block(f: _File, qualname: str, where: str, rel: str):
    """(lines, how, note) of a graded function's own solution block."""
    scope = f.scopes[qualname]
    marks = [m for m in marker_lines(f.scanned) if scope.header_end < m[0] <= scope.last]
    lines, how, side = _lines_of(scope, marks)
    if how == MARKERS:
        return lines, how, None
    lines = _not_given(lines, f.scanned, f.tfile.given.get(qualname, Counter()))
    note = (BY_NAME_NOTE if how == BY_NAME else PARTIAL_NOTE).format(where=f"{where}: {rel}: {qualname}", side=side)
    return lines, how, note


def _shown(sources) -> str:
    return ", ".join(s if isinstance(s, str) else f"a lambda at line {s[1]}" for s in sources) or "another value"


def read_file(text: str, rel: str, tfile: TemplateFile, template: Template, where: str) -> FileBlocks:
    """Every graded function's code as it runs, the rest the handout lacks,
    and what asks for a look; tokens.SourceError if it does not tokenize."""
    f = _File(text, rel, tfile)
    blocks, notes, flags, missing, used, filled = [], [], [], [], set(), 0
    for qualname in tfile.blocks:
        rebound = f.bindings.rebound.get(qualname)
        if qualname not in f.scopes and rebound is None:
            missing.append(qualname)
            continue
        segments, how, note = [], MARKERS, None
        if rebound is not None:
            sources, how = rebound.sources, REBOUND
            segments = [f.body(s, qualname) for s in sources]
            flags.append(
                Flag(
                    where,
                    rel,
                    REBOUND_FLAG.format(target=qualname, sources=_shown(sources), line=rebound.line, how=rebound.how),
                )
            )
        else:
            lines, how, note = _own_block(f, qualname, where, rel)
            filled += any(f.by_line.get(n) for n in lines)
            sources = (qualname, *f.bindings.decorated.get(qualname, ()))
            segments = [lines, *(f.body(s, qualname) for s in sources[1:])]
            if len(sources) > 1:
                flags.append(Flag(where, rel, DECORATED_FLAG.format(target=qualname, sources=_shown(sources[1:]))))
        helpers = reached(f.bindings, [s for s in sources if isinstance(s, str)], f.own, f.running)
        segments += [f.body(h, qualname) for h in helpers]
        found = f.block(template.block_id(rel, qualname), segments, how)
        used.update(n for s in (*sources[1 if rebound is None else 0 :], *helpers) for n in f.span(s))
        used.update([rebound.line] if rebound else [])
        if found:
            blocks.append(found)
            used.update(found.lines)
            if note:
                notes.append(note)
    other = [n for n in sorted(f.by_line) if n not in used and not f.given_line(n)]
    rest = f.block(tfile.other_id, _runs(other, f.by_line), OTHER_HOW)
    if rest:
        blocks.append(rest)
    for line in f.bindings.dynamic:
        flags.append(
            Flag(
                where,
                rel,
                DYNAMIC_FLAG.format(line=line, code=f.scanned.lines[line - 1].strip()[:80]) if line else TOO_DEEP_FLAG,
            )
        )
    if missing:
        notes.append(f"{where}: {rel}: no function {', '.join(missing)}: left out")
    return FileBlocks(tuple(blocks), tuple(notes), tuple(flags), filled)


def _runs(lines, by_line) -> list:
    """Consecutive runs of `lines` (numbers with tokens), fingerprinted apart
    so that no k-gram spans code the handout gave in between."""
    runs, previous = [], None
    for n in lines:
        if previous is None or any(by_line.get(m) for m in range(previous + 1, n)):
            runs.append([])
        runs[-1].append(n)
        previous = n
    return runs
