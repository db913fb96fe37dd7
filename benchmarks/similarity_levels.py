"""`make bench --only similarity-levels`: precision and recall of
`grader similarity` per plagiarism level, on hw1 code.

The levels follow IR-Plag's (Karnalim et al.), each adding one disguise to
the ones below it, as copiers pile them up:

- L1 verbatim: the files copied as they are;
- L2 comments: every comment rewritten or dropped (the solution markers
  kept), blank lines moved;
- L3 identifiers: every name the student chose renamed;
- L4 declarations: the module-level functions in another order;
- L5 statements: adjacent independent statements swapped;
- L6 control structures: `for` loops rewritten as `while` loops over an
  iterator, `x += y` as `x = x + y` (the file re-printed by `ast.unparse`,
  so markers and layout are gone too).

The class is the bench's synthetic one (the reference with personal lines
drawn per submission, benchmarks/similarity.py); per level, COPIES of its
submissions are copied with that level's disguises, and the command's
pairs are judged against the truth: precision and recall of the flagged
pairs (at the threshold), and precision of the top COPIES pairs. Each
level's copies are checked to still be Python (and the L6 rewrite to keep
the reference's behaviour: tests/similarity/test_similarity_levels.py).
"""

from __future__ import annotations

import ast
import io
import keyword
import random
import re
import tokenize
from dataclasses import dataclass

from benchmarks.similarity import personalised
from grader import HANDOUT, REFERENCE
from grader.core.assignment import Assignment
from grader.similarity.analysis import compare
from grader.similarity.corpus import CLASS, Submission
from grader.similarity.template import load_template, read_template_file

LEVELS = ("L1 verbatim", "L2 comments", "L3 identifiers", "L4 declarations", "L5 statements", "L6 control structures")
CLASS_SIZE = 40
COPIES = 8
MARKER = "YOUR SOLUTION"
WORDS = ("now", "then", "here", "the step", "shape check", "per batch", "see notes", "as in lecture")


def comments(text: str, rng: random.Random) -> str:
    """L2: comments rewritten or dropped (markers kept), blank lines moved."""
    out = []
    for line in text.splitlines():
        code, hash_, comment = line.partition("#")
        if hash_ and MARKER not in comment and '"' not in code and "'" not in code:
            line = code.rstrip() if code.strip() else ""
            if line and rng.random() < 0.3:
                line += f"  # {rng.choice(WORDS)}"
        if not line.strip() and rng.random() < 0.5:
            continue
        out.append(line)
        if line.strip() and rng.random() < 0.05:
            out.append("")
    return "\n".join(out) + "\n"


def _given_names(rel: str) -> frozenset:
    """Names the handout gives (module level, and every def's own name): never renamed."""
    return read_template_file(HANDOUT, rel).known  # the template's own rule, one source


def identifiers(text: str, rel: str) -> str:
    """L3: every other name renamed consistently (keyword arguments and attributes kept)."""
    keep = _given_names(rel) | {"self", "cls"}
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out, brackets = [], []
    for i, tok in enumerate(toks):
        string = tok.string
        if tok.type == tokenize.OP and string in "([{":
            brackets.append(string)
        elif tok.type == tokenize.OP and string in ")]}" and brackets:
            brackets.pop()
        if tok.type == tokenize.NAME and not keyword.iskeyword(string) and string not in keep:
            before = out[-1][1] if out else ""
            after = toks[i + 1].string if i + 1 < len(toks) else ""
            in_call = brackets[-1:] == ["("]
            if before != "." and not (in_call and after == "=" and before in ("(", ",")):
                string = f"{string}_v"
        out.append((tok.type, string))
    return tokenize.untokenize(out)


def declarations(text: str, rng: random.Random) -> str:
    """L4: the module-level functions (not classes: their order is inheritance's) shuffled."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if re.match(r"(def|class|@)\S*", line)]
    if len(starts) < 2:
        return text
    chunks = [lines[a:b] for a, b in zip(starts, starts[1:] + [len(lines)])]
    funcs = [i for i, c in enumerate(chunks) if c[0].startswith("def ")]
    moved = funcs[:]
    rng.shuffle(moved)
    order = list(range(len(chunks)))
    for at, source in zip(funcs, moved):
        order[at] = source
    return "".join(lines[: starts[0]]) + "".join("".join(chunks[i]) for i in order)


def _names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def statements(text: str) -> str:
    """L5: each pair of adjacent one-line assignments that do not touch each other's names swapped."""
    tree, lines = ast.parse(text), text.splitlines()
    swaps = []
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            i = 0
            while i + 1 < len(body):
                a, b = body[i], body[i + 1]
                simple = all(isinstance(s, (ast.Assign, ast.AugAssign)) and s.lineno == s.end_lineno for s in (a, b))
                if simple and b.lineno == a.lineno + 1 and not (_names(a) & _names(b)):
                    swaps.append(a.lineno - 1)
                    i += 2
                else:
                    i += 1
    for at in swaps:
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    return "\n".join(lines) + "\n"


class _Control(ast.NodeTransformer):
    """Each loop, at random: `for x in range(a, b)` (no `continue` in it) as
    `x = a; while x < b: body; x += 1`; any other as `it = iter(e); while
    True: try: x = next(it) except StopIteration: break; body`; or kept.
    Drawn per loop, so that copies do not all share one rewrite's idiom."""

    def __init__(self, rng: random.Random):
        self.count, self.rng = 0, rng

    def visit_For(self, node):
        self.generic_visit(node)
        choice = self.rng.random()
        if node.orelse or choice < 0.25:
            return node
        self.count += 1
        if choice < 0.6 and self._counted(node):
            return self._counting(node)
        it = f"_iter{self.count}"
        step = ast.Try(
            body=[
                ast.Assign(
                    targets=[node.target], value=ast.Call(ast.Name("next", ast.Load()), [ast.Name(it, ast.Load())], [])
                )
            ],
            handlers=[ast.ExceptHandler(ast.Name("StopIteration", ast.Load()), None, [ast.Break()])],
            orelse=[],
            finalbody=[],
        )
        loop = ast.While(ast.Constant(True), [step, *node.body], [])
        start = ast.Assign(
            targets=[ast.Name(it, ast.Store())], value=ast.Call(ast.Name("iter", ast.Load()), [node.iter], [])
        )
        return [start, loop]

    @staticmethod
    def _counted(node) -> bool:
        call = node.iter
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "range"
            and 1 <= len(call.args) <= 2
            and not call.keywords
            and isinstance(node.target, ast.Name)
            and not any(isinstance(n, (ast.Continue, ast.Break)) for n in ast.walk(ast.Module(node.body, [])))
        )

    def _counting(self, node):
        args = node.iter.args
        start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else args
        name = node.target.id
        bound = f"_stop{self.count}"
        step = ast.AugAssign(ast.Name(name, ast.Store()), ast.Add(), ast.Constant(1))
        return [
            ast.Assign([ast.Name(bound, ast.Store())], stop),
            ast.Assign([ast.Name(name, ast.Store())], start),
            ast.While(
                ast.Compare(ast.Name(name, ast.Load()), [ast.Lt()], [ast.Name(bound, ast.Load())]),
                [*node.body, step],
                [],
            ),
        ]

    def visit_AugAssign(self, node):
        if isinstance(node.target, ast.Name) and self.rng.random() < 0.5:
            load = ast.Name(node.target.id, ast.Load())
            return ast.Assign(targets=[node.target], value=ast.BinOp(load, node.op, node.value))
        return node


def control(text: str, rng: random.Random) -> str:
    """L6: loops and augmented assignments rewritten (see _Control); the file re-printed."""
    tree = _Control(rng).visit(ast.parse(text))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def disguise(files: dict, level: int, rng: random.Random) -> dict:
    """`files` (rel -> text) with the disguises of levels 1..level."""
    out = dict(files)
    for rel, text in out.items():
        if level >= 2:
            text = comments(text, rng)
        if level >= 3:
            text = identifiers(text, rel)
        if level >= 4 and not rel.endswith("autograd.py"):
            text = declarations(text, rng)
        if level >= 5:
            text = statements(text)
        if level >= 6:
            text = control(text, rng)
        out[rel] = text
    return out


@dataclass(frozen=True)
class LevelResult:
    level: str
    copies: int
    flagged: int  # pairs flagged
    found: int  # of them, planted copies
    top: int  # planted copies among the `copies` most similar pairs
    lowest: float  # the least similar planted copy's figure
    highest_other: float  # the most similar pair that is not a copy

    @property
    def precision(self) -> float:
        return self.found / self.flagged if self.flagged else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.copies


def class_files(count: int, seed: int) -> dict:
    """name -> files of the synthetic class (in memory)."""
    rng = random.Random(seed)
    sources = {rel: (REFERENCE / rel).read_text(encoding="utf-8") for rel in Assignment.hw1().student_files}
    return {f"student{k:03d}": {rel: personalised(text, rng) for rel, text in sources.items()} for k in range(count)}


def run_level(level: int, people: dict, template, copies: int = COPIES, seed: int = 36) -> LevelResult:
    rng = random.Random(seed + level)
    sources = rng.sample(sorted(people), copies)
    planted = {f"copy{i:02d}": disguise(people[s], level, rng) for i, s in enumerate(sources)}
    truth = {frozenset((f"copy{i:02d}", s)) for i, s in enumerate(sources)}
    subs = [Submission(n, CLASS, f) for n, f in {**people, **planted}.items()]
    pairs = compare(subs, [], template).pairs
    is_copy = [frozenset((p.a, p.b)) in truth for p in pairs]
    flagged = [c for p, c in zip(pairs, is_copy) if p.flagged]
    return LevelResult(
        LEVELS[level - 1],
        copies,
        len(flagged),
        sum(flagged),
        sum(is_copy[:copies]),
        min(p.similarity for p, c in zip(pairs, is_copy) if c),
        max(p.similarity for p, c in zip(pairs, is_copy) if not c),
    )


TARGETED = 5  # levels whose copies must all be flagged, and only they (L6 is measured, no target yet)


def levels(count: int = CLASS_SIZE, copies: int = COPIES) -> bool:
    """Print one line per level; True when L1-L5 are found exactly (precision and recall 1 at the threshold)."""
    template = load_template(HANDOUT, Assignment.hw1().student_files)
    people = class_files(count, seed=36)
    ok = True
    for level in range(1, len(LEVELS) + 1):
        r = run_level(level, people, template, copies)
        target = level <= TARGETED
        ok = ok and (not target or (r.recall == 1.0 and r.precision == 1.0))
        print(
            f"similarity {r.level:<22} {count} + {r.copies} copies: precision {r.precision:.2f}, recall "
            f"{r.recall:.2f} (flagged {r.flagged}); top {r.copies}: {r.top}/{r.copies}; weakest copy "
            f"{r.lowest:.2f}, strongest non-copy {r.highest_other:.2f} "
            f"{('ok' if r.recall == r.precision == 1.0 else 'MISSED') if target else '(measured, no target)'}"
        )
    return ok
