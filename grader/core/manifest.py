"""Which files make a student handout, where they go, and which reference
files stay with the instructor. An assignment's manifest is data, read from
its assignment.toml (grader/core/assignment.py); the grader's public cases are
written beside these files (grader/handout/cases.py).

Every file under the reference must be either shipped or listed as
instructor-only: a new file is never shipped or dropped silently, the build
stops and names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.core.paths import SHIPPED

# Where a manifest entry's source lives.
REFERENCE = "reference"  # relative to the SRC argument
GRADER = "grader"  # relative to the grader's untrusted package (the submit client)
CLIENT = "mugrade.py"  # the submit client's file there


@dataclass(frozen=True)
class Entry:
    source: str  # path relative to its origin
    dest: str  # path relative to the handout root
    origin: str = REFERENCE


@dataclass(frozen=True)
class Manifest:
    entries: tuple[Entry, ...]
    instructor_only: tuple[str, ...] = ()  # reference paths never shipped (a folder covers its files)
    mirrors: tuple[tuple[str, str], ...] = ()  # (reference path, grader file) kept as copies

    @classmethod
    def of(cls, files=(), renamed=None, client="", instructor_only=(), generated=()) -> "Manifest":
        """files ship at their own path, renamed maps source -> handout path; the
        submit client, if named, ships from the grader and the reference keeps a
        copy of it; `generated` reference paths are written by the grader."""
        entries = [Entry(f, f) for f in files] + [Entry(s, d) for s, d in (renamed or {}).items()]
        mirrors = ()
        if client:
            entries.append(Entry(CLIENT, client, origin=GRADER))
            mirrors = ((client, CLIENT),)
        return cls(tuple(entries), tuple(instructor_only) + tuple(generated) + (client,) * bool(client), mirrors)


# Caches and OS litter that may appear anywhere and mean nothing: never read
# from reference/ (the manifest check) nor compared in handout/ (check-handout).
IGNORED_NAMES = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".DS_Store"}

UNLISTED = (
    "not in the handout manifest: add it to [manifest] files or instructor_only in the assignment's assignment.toml"
)
MISSING = "listed in the handout manifest but missing ({dest} in the handout)"


def grader_dir() -> Path:
    return SHIPPED


def source_path(entry: Entry, src: Path) -> Path:
    return (src if entry.origin == REFERENCE else grader_dir()) / entry.source


def mirror_paths(manifest: Manifest, src: Path) -> list[tuple[Path, Path]]:
    """(reference copy, grader original) for each mirrored file."""
    return [(src / rel, grader_dir() / original) for rel, original in manifest.mirrors]


def _covered(manifest: Manifest, rel: str) -> bool:
    shipped = {e.source for e in manifest.entries if e.origin == REFERENCE}
    return rel in shipped or any(rel == p or rel.startswith(p + "/") for p in manifest.instructor_only)


def _reference_files(src: Path):
    """Reference paths relative to src; symlinked dirs are not entered."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if IGNORED_NAMES.intersection(rel.parts) or path.is_dir() and not path.is_symlink():
            continue
        yield rel.as_posix()


def coverage_problems(manifest: Manifest, src: Path) -> list[str]:
    """`path: reason` for each unlisted reference file and each missing source."""
    problems = [f"{src / rel}: {UNLISTED}" for rel in _reference_files(src) if not _covered(manifest, rel)]
    for entry in manifest.entries:
        path = source_path(entry, src)
        if not path.is_file():
            problems.append(f"{path}: {MISSING.format(dest=entry.dest)}")
    return problems
