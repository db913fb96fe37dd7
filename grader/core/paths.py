"""Where the grader's own files are, in a checkout and in an installed wheel.

ROOT is the folder the `grader` package is imported from: a checkout (an
editable install, `python -m grader` from a clone), or site-packages when
the grader was installed from a wheel (`pip install .`). In a checkout the
project's own assignment (hw1) is ROOT/assignment.toml, and what the grader
writes (.grader-cache/, data/) lives beside it, as it always has. A wheel
carries a copy of hw1 in the package, BUNDLED (written at build time by
setup.py: assignment.toml, reference/, handout/, and in project/ the
checkout's own pyproject.toml, README.md and assignment.toml, for
`grader gradescope-bundle`); an installed grader writes under STATE
instead ($XDG_CACHE_HOME/needle-grader, else ~/.cache/needle-grader).

SHIPPED is the code that runs beside student code (copied into each
sandboxed worker and into the handout). Which assignment a command grades
is decided in grader/core/assignment.py (Assignment.option), not here.
"""

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the imported `grader` package
ROOT = PACKAGE.parent
SHIPPED = PACKAGE / "shipped"
BUNDLED = PACKAGE / "bundled"  # only in a wheel: hw1 copied in at build time (setup.py)
BUNDLED_PROJECT = BUNDLED / "project"  # the checkout's files beside grader/, for gradescope-bundle


def in_checkout() -> bool:
    """Whether the package sits in a checkout (its pyproject.toml and hw1's assignment.toml beside it)."""
    return (ROOT / "pyproject.toml").is_file() and (ROOT / "assignment.toml").is_file()


def home() -> Path:
    """The folder holding this project's own assignment.toml (hw1): the checkout, else the wheel's copy."""
    return ROOT if in_checkout() else BUNDLED


def state() -> Path:
    """Where an installed grader writes (answer caches, MNIST): $XDG_CACHE_HOME/needle-grader,
    else ~/.cache/needle-grader. A checkout writes beside its assignment instead."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "needle-grader"
