"""Write a handout tree from the reference, following the manifest.

`.py` files lose their solution bodies and hidden tests, notebooks go
through nbformat, everything else is copied byte for byte; every file then
gets its generated-file label (labels.py). The result also carries the
secret lines (for the leak check) and the blocks found.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grader.core.assignment import Assignment
from grader.core import labels
from grader.handout.cases import NOT_SECRET, CasesError, write_cases
from grader.handout.leaks import Secret, secrets_of
from grader.core.manifest import GRADER, REFERENCE, Entry, coverage_problems, source_path
from grader.core.markers import Block, strip_source
from grader.handout.notebook import strip_notebook


UNLABELLED = ("this kind of file cannot hold a generated-file label; add its comment syntax to "
              "grader/core/labels.py, or list it as instructor_only")


class HandoutError(Exception):
    """The handout cannot be built or is wrong; one `path: reason` per line."""


@dataclass(frozen=True)
class Built:
    files: tuple[str, ...]                  # handout paths written, sorted
    blocks: tuple[tuple[str, Block], ...]   # (where in the reference, block)
    secrets: tuple[Secret, ...]


def _display(entry: Entry, src: Path) -> str:
    """How messages name a source: as the user typed SRC, or grader/..."""
    return f"grader/shipped/{entry.source}" if entry.origin == GRADER else f"{src.as_posix()}/{entry.source}"


def entry_label(entry: Entry, src: Path, assignment: Assignment) -> str:
    """The label sentence of one manifest entry's handout copy. A reference
    file is named in the assignment's reference, whatever copy SRC is."""
    source = assignment.reference / entry.source if entry.origin == REFERENCE else source_path(entry, src)
    student = entry.dest in assignment.student_files or entry.dest.endswith(".ipynb")
    return labels.sentence(labels.source_name(source, assignment), labels.command_of(assignment), student)


def _convert(entry: Entry, src: Path, strip_questions, label: str):
    """(bytes for the handout, [(where, block)], [secrets]) of one entry."""
    data = source_path(entry, src).read_bytes()
    where = _display(entry, src)
    if entry.source.endswith((".py", ".ipynb")):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise HandoutError(f"{where}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    if entry.source.endswith(".py"):
        result = strip_source(text, where, fallback_name=Path(entry.source).stem,
                              strip_questions=strip_questions)
        blocks = [(where, b) for b in result.blocks]
        return labels.label(entry.dest, result.text.encode("utf-8"), label), blocks, \
            secrets_of(where, text, result.blocks)
    if entry.source.endswith(".ipynb"):
        result = strip_notebook(text, where, strip_questions=strip_questions, label=label)
        blocks, secrets = [], []
        for cell in result.cells:
            blocks.extend((cell.where, b) for b in cell.blocks)
            secrets.extend(secrets_of(cell.where, cell.source, cell.blocks))
        return result.text.encode("utf-8"), blocks, secrets
    if labels.comment_form(entry.dest) is None:
        raise HandoutError(f"{where}: {UNLABELLED}")
    return labels.label(entry.dest, data, label), [], []


def _mode(path: Path) -> int:
    # Only the executable bit matters to git; keep it, normalize the rest.
    return 0o755 if path.stat().st_mode & 0o111 else 0o644


def build_tree(src: Path, out: Path, *, strip_questions: frozenset[str] | None = None,
               assignment: Assignment | None = None) -> Built:
    """Write the handout of `assignment` (default hw1) for the reference
    `src` into the empty directory `out`.

    strip_questions: the questions whose blocks become stubs (None: all);
    the checks build partial handouts to test one question at a time.
    """
    assignment = assignment or Assignment.hw1()
    manifest = assignment.manifest
    problems = coverage_problems(manifest, src)
    if problems:
        raise HandoutError("\n".join(problems))
    all_blocks, all_secrets = [], []
    for entry in manifest.entries:
        data, blocks, secrets = _convert(entry, src, strip_questions, entry_label(entry, src, assignment))
        all_blocks.extend(blocks)
        all_secrets.extend(secrets)
        target = out / entry.dest
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.chmod(target, _mode(source_path(entry, src)))
    try:  # the grader's public cases, their expected values and points
        case_files, blocks, secrets = write_cases(out, assignment)
    except CasesError as e:
        raise HandoutError(str(e)) from None
    files = tuple(sorted([e.dest for e in manifest.entries] + case_files))
    all_secrets = [s for s in all_secrets if s.text not in NOT_SECRET]  # the cases ship these lines
    return Built(files, tuple(all_blocks + blocks), tuple(all_secrets + secrets))
