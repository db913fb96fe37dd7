"""Which files make the student handout, where they go, and which reference
files stay with the instructor. (The grader's public cases are written
besides these: grader/handout/cases.py.)

Every file under the reference must be either shipped (MANIFEST) or listed
as instructor-only (INSTRUCTOR_ONLY): a new file is never shipped or dropped
silently, the build stops and names it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Where a manifest entry's source lives.
REFERENCE = "reference"   # relative to the SRC argument
GRADER = "grader"         # relative to the grader package (the submit client)


@dataclass(frozen=True)
class Entry:
    source: str          # path relative to its origin
    dest: str            # path relative to the handout root
    origin: str = REFERENCE


MANIFEST: tuple[Entry, ...] = (
    Entry("python/needle/__init__.py", "python/needle/__init__.py"),
    Entry("python/needle/autograd.py", "python/needle/autograd.py"),
    Entry("python/needle/backend_numpy.py", "python/needle/backend_numpy.py"),
    Entry("python/needle/init/__init__.py", "python/needle/init/__init__.py"),
    Entry("python/needle/init/init_basic.py", "python/needle/init/init_basic.py"),
    Entry("python/needle/ops/__init__.py", "python/needle/ops/__init__.py"),
    Entry("python/needle/ops/ops_mathematic.py", "python/needle/ops/ops_mathematic.py"),
    Entry("apps/simple_ml.py", "apps/simple_ml.py"),
    Entry("tests/hw1/test_autograd_hw.py", "tests/hw1/test_autograd_hw.py"),
    Entry("tests/hw1/test_cases.py", "tests/hw1/test_cases.py"),
    Entry("hw1.ipynb", "hw1.ipynb"),
    Entry("hw1_check.py", "hw1_check.py"),
    Entry("tools/fetch_mnist.py", "tools/fetch_mnist.py"),
    Entry("handout_files/Makefile", "Makefile"),
    Entry("handout_files/README.md", "README.md"),
    Entry("handout_files/gitignore", ".gitignore"),
    Entry("handout_files/conftest.py", "conftest.py"),
    Entry("handout_files/pytest.ini", "pytest.ini"),
    Entry("mugrade.py", "mugrade.py", origin=GRADER),
)

# Reference paths never shipped (a directory covers everything below it).
INSTRUCTOR_ONLY: tuple[str, ...] = (
    "data",        # MNIST; students fetch it with tools/fetch_mnist.py
    "mugrade.py",  # a copy of grader/untrusted/mugrade.py (see MIRRORS)
    "tests/hw1/hw1_cases",  # generated from grader/untrusted/cases; the handout gets its own (cases.py)
)

# Reference files that are copies of grader files, refreshed by `make handout`,
# so that a copy of the reference folder runs alone (its tests and notebook
# import mugrade). (reference path, grader path)
MIRRORS: tuple[tuple[str, str], ...] = (
    ("mugrade.py", "mugrade.py"),
)

# Caches that may appear anywhere and mean nothing.
IGNORED_NAMES = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".DS_Store"}

UNLISTED = ("not in the handout manifest: add it to MANIFEST or INSTRUCTOR_ONLY "
            "in grader/handout/manifest.py")
MISSING = "listed in the handout manifest but missing ({dest} in the handout)"


def grader_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "untrusted"


def source_path(entry: Entry, src: Path) -> Path:
    return (src if entry.origin == REFERENCE else grader_dir()) / entry.source


def mirror_paths(src: Path) -> list[tuple[Path, Path]]:
    """(reference copy, grader original) for each entry of MIRRORS."""
    return [(src / rel, grader_dir() / original) for rel, original in MIRRORS]


def _covered(rel: str) -> bool:
    shipped = {e.source for e in MANIFEST if e.origin == REFERENCE}
    return rel in shipped or any(rel == p or rel.startswith(p + "/") for p in INSTRUCTOR_ONLY)


def _reference_files(src: Path):
    """Reference paths relative to src; symlinked dirs are not entered."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if IGNORED_NAMES.intersection(rel.parts) or path.is_dir() and not path.is_symlink():
            continue
        yield rel.as_posix()


def coverage_problems(src: Path) -> list[str]:
    """`path: reason` for each unlisted reference file and each missing source."""
    problems = [f"{src / rel}: {UNLISTED}" for rel in _reference_files(src) if not _covered(rel)]
    for entry in MANIFEST:
        path = source_path(entry, src)
        if not path.is_file():
            problems.append(f"{path}: {MISSING.format(dest=entry.dest)}")
    return problems

