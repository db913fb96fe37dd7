"""A synthetic class for the similarity tests, built from correct solutions
only: the reference's blocks, three complete independent solutions
(similarity_styles.py) and the catalogue's correct variants of single
blocks (tests/catalogue: alternatives and course style).

Each classmate writes each short block in one of the variants, and most longer
ones from interchangeable parts (similarity_slots.py; drawn with a fixed
seed), so that any two share the forced answers and some of the common
ones, as a real class does. Planted copies then take one classmate's (or a
public solution's) files and disguise them as copiers do: variables
renamed, comments dropped, code reformatted, functions reordered.
"""

from __future__ import annotations

import io
import keyword
import random
import re
import tokenize
from pathlib import Path

from catalogue import build
from catalogue.alternatives import ALTERNATIVES
from catalogue.course_style import COURSE_STYLE
from similarity_slots import SLOTTED, assemble
from similarity_styles import FILE, HELPER, STYLES, body, helper_def

from grader.similarity.tokens import ALWAYS_KNOWN

BLOCKS = tuple(STYLES["terse"])  # every block id of hw1
SLOTTED_SHARE = 0.8  # of classmates who assemble a longer block from parts rather than take a whole variant


def catalogue_variants() -> dict:
    """block id -> the catalogue's own correct bodies of it (Body edits)."""
    found = {}
    for entry in [*ALTERNATIVES, *COURSE_STYLE]:
        for edit in entry.edits:
            if isinstance(edit, build.Body):
                found.setdefault(edit.function, []).append(edit)
    return found


def variants() -> dict:
    """block id -> every correct body we have of it (None: the reference's)."""
    extra = catalogue_variants()
    return {
        bid: [
            *([None] if bid != HELPER else []),  # (the reference has no helper: its own code inlines it)
            *(body(style, bid) for style in STYLES.values()),
            *extra.get(bid, []),
        ]
        for bid in BLOCKS
    }


def solution(edits) -> dict:
    """rel -> text: the reference's files with `edits` applied."""
    return build.apply_edits(build.reference_sources(), [e for e in edits if e is not None])


def independent(style: str) -> dict:
    """One complete independent solution: every block in `style` ("reference" too)."""
    if style == "reference":
        return build.reference_sources()
    return solution([body(STYLES[style], bid) for bid in BLOCKS])


def classmate(rng: random.Random, pool: dict) -> dict:
    """A longer block assembled from parts (most of the time, as most
    students write their own), else one of the whole variants."""
    edits = []
    for bid in BLOCKS:
        if bid in SLOTTED and rng.random() < SLOTTED_SHARE:
            text = assemble(SLOTTED[bid], rng)
            edits.append(helper_def(text) if bid == HELPER else build.Body(FILE.get(bid, build.OPS), bid, text))
        else:
            edits.append(rng.choice(pool[bid]))
    return solution(edits)


def make_class(size: int, seed: int = 25) -> dict:
    """name -> files: the four independent solutions, then classmates up to `size`."""
    rng, pool = random.Random(seed), variants()
    people = {f"indep_{style}": independent(style) for style in ("reference", *STYLES)}
    for i in range(size - len(people)):
        people[f"student{i:03d}"] = classmate(rng, pool)
    return people


# --- how copiers disguise what they copy -------------------------------------------


def _tokens(text: str):
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def disguise(text: str, known: frozenset, keep_markers: bool = True) -> str:
    """Every name the student chose renamed (consistently, keyword arguments
    left alone), comments dropped (solution markers too unless
    keep_markers), and the code laid out again: two-space indents, spaces
    everywhere tokenize puts them."""
    out, depth = [], 0
    for tok in _tokens(text):
        kind, string = tok.type, tok.string
        if kind == tokenize.COMMENT and not (keep_markers and "YOUR SOLUTION" in string):
            continue
        if kind == tokenize.NAME and _renamable(tok, known, out):
            string = f"{string}_x"
        if kind == tokenize.INDENT:
            depth += 1
            string = "  " * depth
        elif kind == tokenize.DEDENT:
            depth -= 1
        out.append((kind, string))
    return tokenize.untokenize(out)


def _renamable(tok, known, previous) -> bool:
    if keyword.iskeyword(tok.string) or tok.string in known or tok.string in ALWAYS_KNOWN:
        return False
    before = previous[-1][1] if previous else ""
    after = tok.line[tok.end[1] :].lstrip()
    keyword_argument = after.startswith("=") and not after.startswith("==") and before in ("(", ",")
    return before != "." and not keyword_argument


def reorder(text: str) -> str:
    """The module-level functions and classes after the imports, in reverse
    order (Python looks names up when called, so the code means the same)."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if re.match(r"(def|class) ", line)]
    if len(starts) < 2:
        return text
    chunks = [lines[a:b] for a, b in zip(starts, starts[1:] + [len(lines)])]
    return "".join(lines[: starts[0]]) + "".join("".join(c) for c in reversed(chunks))


def plant_copy(files: dict, known: dict, keep_markers: bool = True) -> dict:
    """A disguised copy of a submission's files; `known` is rel -> the
    names the handout gives (template.TemplateFile.known)."""
    copied = {rel: disguise(text, known[rel], keep_markers) for rel, text in files.items()}
    copied[build.OPS] = reorder(copied[build.OPS])  # autograd's classes must stay in order
    return copied


def write(folder: Path, people: dict) -> Path:
    """Each submission as a handout-shaped folder under `folder`."""
    for name, files in people.items():
        build.write_submission(folder / name, files)
    return folder
