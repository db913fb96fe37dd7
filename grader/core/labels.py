"""The one-line label on every file `grader handout` writes or copies.

A generated copy opens with a line naming its source and the command that
writes it (after a `#!` line, if any), in the comment syntax of its kind:

    # Generated from grader/shipped/mugrade.py by `make handout`; do not edit.

Students fill in the handout's student files and notebook, so theirs end
"students fill in this copy; instructors edit the source" instead. A file
that cannot hold a comment is labelled elsewhere: a notebook in its metadata
(`generated`, which Jupyter keeps), the data files of the public cases
(expected values, points, student code: JSON and .npy) by the INDEX file
beside them, itself labelled, which lists them.
"""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path, PurePosixPath

from grader.core.assignment import Assignment
from grader.core.paths import ROOT

DO_NOT_EDIT = "do not edit"
FILL_IN = "students fill in this copy; instructors edit the source"
SENTENCE = "Generated from {source} by `{command}`; {note}."
LABEL_RE = re.compile(r"Generated from (\S+) by `([^`]+)`; (.+)\.")

# Comment syntax by file name, then by suffix; "{}" is the sentence.
BY_NAME = {"Makefile": "# {}", ".gitignore": "# {}", "gitignore": "# {}"}
BY_SUFFIX = {
    ".py": "# {}",
    ".ini": "# {}",
    ".yml": "# {}",
    ".yaml": "# {}",
    ".toml": "# {}",
    ".sh": "# {}",
    ".txt": "# {}",
    ".cfg": "# {}",
    ".md": "<!-- {} -->",
}
NOTEBOOK_KEY = "generated"  # the notebook metadata field that holds the sentence
INDEX = "GENERATED.txt"  # lists, in a generated folder, the files that cannot hold a label

MISSING = "no label naming its source (a first line `{example}`); run `make handout`"
NOT_LISTED = "cannot hold a label and is not listed in {index} beside it; add it to INDEX_ENTRIES in {where}"


def sentence(source: str, command: str, student: bool = False) -> str:
    return SENTENCE.format(source=source, command=command, note=FILL_IN if student else DO_NOT_EDIT)


def command_of(assignment: Assignment) -> str:
    """The command that rewrites an assignment's generated files."""
    if assignment.is_hw1:  # the checkout's, or its copy in a wheel (whose handout is the checkout's)
        return "make handout"
    return f"grader handout --assignment {assignment.toml.parent.name}"


def source_name(path: Path, assignment: Assignment) -> str:
    """How a label names a source file: relative to the assignment's folder,
    else to this repository (the grader's files), else by its name alone."""
    for base in (assignment.toml.parent, ROOT):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return path.name


def comment_form(path: str) -> str | None:
    """How a file of this name holds a one-line comment; None if it cannot."""
    name = PurePosixPath(path).name
    return BY_NAME.get(name) or BY_SUFFIX.get(PurePosixPath(name).suffix)


def label(path: str, data: bytes, text: str) -> bytes:
    """`data` with the sentence `text` as its first line (second after `#!`).

    Only for files with a comment form; a notebook goes through label_notebook."""
    line = comment_form(path).format(text).encode("utf-8") + b"\n"
    if data.startswith(b"#!"):
        first, _, rest = data.partition(b"\n")
        return first + b"\n" + line + rest
    return line + data


def label_notebook(nb, text: str) -> None:
    """Put the sentence in a notebook's metadata (nbformat node, in place)."""
    nb.metadata[NOTEBOOK_KEY] = text


def _header_line(data: bytes) -> str:
    lines = data.split(b"\n", 2)
    line = lines[1] if data.startswith(b"#!") and len(lines) > 1 else lines[0]
    return line.decode("utf-8", "replace")


def labelled(path: str, data: bytes) -> bool:
    """Whether the file carries its own label (only for kinds that can)."""
    if path.endswith(".ipynb"):
        try:
            text = json.loads(data).get("metadata", {}).get(NOTEBOOK_KEY, "")
        except (ValueError, AttributeError):
            return False
        return bool(LABEL_RE.fullmatch(text))
    form = comment_form(path)
    if form is None:
        return False
    prefix, _, suffix = form.partition("{}")
    line = _header_line(data)
    return (
        line.startswith(prefix)
        and line.endswith(suffix)
        and bool(LABEL_RE.fullmatch(line[len(prefix) : len(line) - len(suffix)]))
    )


def can_hold_label(path: str) -> bool:
    return path.endswith(".ipynb") or comment_form(path) is not None


def index_text(text: str, entries: dict) -> str:
    """The INDEX file: its own label, then `pattern  what it is` per entry."""
    lines = [
        comment_form(INDEX).format(text),
        "# These files cannot hold a label line, so it is here: each pattern, relative to this",
        "# folder, and what the files are.",
    ]
    width = max(len(p) for p in entries)
    lines += [f"{pattern.ljust(width)}  {what}" for pattern, what in entries.items()]
    return "\n".join(lines) + "\n"


def index_patterns(data: bytes) -> list[str]:
    return [
        line.split()[0]
        for line in data.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("#")
    ]


def unlabelled(files: dict) -> list[str]:
    """`path (why)` for each generated file without its label.

    files: path (relative to the generated tree's root) -> bytes. A file that
    cannot hold a label must match a pattern of the INDEX in its own folder
    or a folder above it, and that INDEX must be labelled itself."""
    problems = []
    example = comment_form("x.py").format(sentence("SOURCE", "make handout"))
    for path in sorted(files):
        if can_hold_label(path):
            if not labelled(path, files[path]):
                problems.append(f"{path} ({MISSING.format(example=example)})")
        elif not _indexed(path, files):
            problems.append(f"{path} ({NOT_LISTED.format(index=INDEX, where='grader/handout/cases.py')})")
    return problems


def _indexed(path: str, files: dict) -> bool:
    parts = PurePosixPath(path).parts
    for depth in range(len(parts) - 1, -1, -1):
        folder = "/".join(parts[:depth])
        index = f"{folder}/{INDEX}" if folder else INDEX
        if index in files and labelled(index, files[index]):
            rel = "/".join(parts[depth:])
            if any(fnmatch.fnmatch(rel, pattern) for pattern in index_patterns(files[index])):
                return True
    return False
