"""Where the grader's own files are: the one home of the repository root
(the folder holding the `grader` package) and the package's folder of code
that runs beside student code. An assignment's folders come from its
assignment.toml (grader/assignment.py), not from here."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNTRUSTED = ROOT / "grader" / "untrusted"   # copied into the sandbox and the handout, never run in the parent
