"""Leak check: no solution or hidden-test line may reach the handout.

Secrets are the non-trivial lines of every stripped block, minus lines the
same source file also shows outside its blocks (given code is not secret).
The haystack is every line of every handout file; for notebooks, every
string anywhere in the JSON (sources, outputs, attachments, metadata), so a
solution echoed in an output or hidden in metadata is caught too. Lines are
compared after dropping comments and collapsing whitespace.

A second check: every marker pair left in the handout holds only its stub.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader.core.markers import BEGIN_SOLUTION, END_SOLUTION, Block, split_lines

# Code that says nothing about a solution when it stands alone on a line.
TRIVIAL_WORDS = {"return", "pass", "else", "try", "finally", "continue", "break",
                 "raise", "None", "True", "False", "yield", "except", "del"}
NAME_TAKING = {"return", "yield", "raise", "del"}
WORD_RE = re.compile(r"[A-Za-z_]\w*")

LEAK = "solution line leaked (from {origin}): {text}"
BODY_LEFT = "marker pair still has a body: only the NotImplementedError stub may stay"


@dataclass(frozen=True)
class Secret:
    text: str    # normalized line
    origin: str  # `path:line` of the line in the reference


@dataclass(frozen=True)
class Leak:
    where: str   # `path:line` in the handout
    reason: str

    def __str__(self):
        return f"{self.where}: {self.reason}"


def normalize(line: str) -> str:
    """The code of a line: comment dropped (when no string could hold the #),
    whitespace collapsed."""
    code = line.strip()
    if "#" in code and not any(q in code.split("#", 1)[0] for q in "'\""):
        code = code.split("#", 1)[0]
    return " ".join(code.split())


def is_trivial(code: str) -> bool:
    """Blank, punctuation only, a lone keyword (`else:`, `return`), or a
    keyword with one bare name (`return out`): such lines reveal nothing."""
    words = WORD_RE.findall(code)
    if not words:
        return True
    if WORD_RE.sub("", code).strip(" :(),") or len(words) > 2:
        return False
    return words[0] in TRIVIAL_WORDS and (len(words) == 1 or words[0] in NAME_TAKING)


def secrets_of(path: str, text: str, blocks: tuple[Block, ...]) -> list[Secret]:
    """The secret lines of one source file, given its text and its blocks."""
    inside = set()
    for block in blocks:
        inside.update(range(block.begin, block.end + 1))
    lines = split_lines(text)
    given = {normalize(line) for n, line in enumerate(lines, start=1) if n not in inside}
    found = []
    for block in blocks:
        for offset, line in enumerate(block.body, start=1):
            code = normalize(line)
            if not is_trivial(code) and code not in given:
                found.append(Secret(code, f"{path}:{block.begin + offset}"))
    return found


def _strings(value):
    """Every string inside a JSON value, attachments decoded when they are text."""
    if isinstance(value, str):
        yield value
        try:
            yield base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            pass
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _haystack(path: Path, rel: str):
    """(where, normalized line) for every line a student could read in a file."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = text
        for string in _strings(document):
            for line in string.splitlines():
                yield rel, normalize(line)
        return
    for number, line in enumerate(split_lines(text), start=1):
        yield f"{rel}:{number}", normalize(line)


def _sources(path: Path, rel: str):
    """(where, text) of each code unit: the file, or each notebook cell."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".py":
        yield rel, text
    elif path.suffix == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
        except (json.JSONDecodeError, AttributeError):
            return
        for index, cell in enumerate(cells, start=1):
            source = cell.get("source", "")
            yield f"{rel}#cell{index}", "".join(source) if isinstance(source, list) else source


def _leftover_bodies(path: Path, rel: str):
    """Marker pairs in a handout file holding more than the stub."""
    for where, text in _sources(path, rel):
        open_at, body = None, []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip() == BEGIN_SOLUTION:
                open_at, body = number, []
            elif line.strip() == END_SOLUTION and open_at is not None:
                if len(body) != 1 or "NotImplementedError" not in body[0]:
                    yield Leak(f"{where}:{open_at}", BODY_LEFT)
                open_at = None
            elif open_at is not None and line.strip():
                body.append(line)


def find_leaks(root: Path, secrets: list[Secret], label: str | None = None) -> list[Leak]:
    """Every place under `root` where a secret line or a marker body shows.

    Places are named `label/relative/path:line` (label defaults to root).
    """
    label = root.as_posix() if label is None else label
    by_text: dict[str, Secret] = {}
    for secret in secrets:
        by_text.setdefault(secret.text, secret)
    leaks = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f"{label}/{path.relative_to(root).as_posix()}"
        for where, code in _haystack(path, rel):
            if code in by_text:
                leaks.append(Leak(where, LEAK.format(origin=by_text[code].origin, text=code)))
        leaks.extend(_leftover_bodies(path, rel))
    return leaks
