"""Where the grader's own files are: the one home of the repository root
(the folder holding the `grader` package) and of the shipped package, the
code that runs beside student code (copied into each sandboxed worker and
into the handout). An assignment's folders come from its assignment.toml
(grader/core/assignment.py), not from here."""
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]   # the installed `grader` package
ROOT = PACKAGE.parent
SHIPPED = PACKAGE / "shipped"
