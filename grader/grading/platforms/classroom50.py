"""`grader classroom50 OUTDIR`: the folder an instructor puts at
CLASSROOM/autograders/ASSIGNMENT/ in the organization's classroom50
repository, where Classroom 50's runner finds its autograder.py.

    OUTDIR/autograder.py       runs needle_autograde.classroom50_autograde.main()
    OUTDIR/needle_autograde/   copies of grader/shipped/{classroom50_autograde,
                               classroom50_result,int_points,github_ci}.py (relative
                               imports, standard library only)
    OUTDIR/handout/            the pristine handout the student files are overlaid on
                               (its workflow left out: the runner is the workflow)
    OUTDIR/bundle.json         the student files, where points.json is, the points'
                               unit and the public cases' time limit
    OUTDIR/GENERATED.txt       the label of bundle.json, which cannot hold one

Everything is written to a temporary folder beside OUTDIR and renamed into
place, so a failure leaves no partial folder. The handout copy is what
`make handout` committed: run `grader check-handout` first if in doubt.
"""

import json
import os
import shutil
import tempfile
from pathlib import Path

from grader.core import labels
from grader.core.assignment import Assignment, shown
from grader.core.paths import SHIPPED
from grader.grading.report.scoring import UNIT

PACKAGE = "needle_autograde"  # the copied modules' package beside autograder.py
MODULES = ("classroom50_autograde.py", "classroom50_result.py", "int_points.py", "github_ci.py")
HANDOUT = "handout"
CONFIG = "bundle.json"
COMMAND = "grader classroom50 OUTDIR"
TIMEOUT = 600  # seconds for the public cases (the runner's grade job stops at 15 minutes)
SKIP = shutil.ignore_patterns(".github", ".venv", "data", "__pycache__", ".pytest_cache", "*.pyc")
LAUNCHER = '''"""Classroom 50's autograder for {name}'s public cases: the runner runs it in
the student's checkout; it writes ./result.json and ./release-body.md."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from {package} import classroom50_autograde  # noqa: E402

if __name__ == "__main__":
    sys.exit(classroom50_autograde.main(sys.argv[1:]))
'''


class Classroom50Error(ValueError):
    """OUTDIR cannot be written, or the handout is missing; one line says which."""


def _label(source: str) -> str:
    return labels.sentence(source, COMMAND)


def _write(path: Path, text: str, source: str):
    path.write_bytes(labels.label(path.name, text.encode("utf-8"), _label(source)))


def _config(assignment: Assignment) -> dict:
    return {
        "handout": HANDOUT,
        "student_files": list(assignment.student_files),
        "points": f"{assignment.cases_dest}/points.json",
        "unit": UNIT,
        "timeout": TIMEOUT,
    }


def _fill(folder: Path, assignment: Assignment):
    package = folder / PACKAGE
    package.mkdir()
    _write(package / "__init__.py", "", "grader/grading/platforms/classroom50.py")
    for name in MODULES:
        _write(package / name, (SHIPPED / name).read_text(encoding="utf-8"), shown(SHIPPED / name))
    _write(
        folder / "autograder.py",
        LAUNCHER.format(name=assignment.name, package=PACKAGE),
        "grader/grading/platforms/classroom50.py",
    )
    (folder / CONFIG).write_text(json.dumps(_config(assignment), indent=1) + "\n", encoding="utf-8")
    _write(
        folder / labels.INDEX,
        f"{CONFIG}  what autograder.py grades: the student files, points.json, the points' unit, the time limit\n",
        "grader/grading/platforms/classroom50.py",
    )
    shutil.copytree(assignment.handout, folder / HANDOUT, ignore=SKIP, symlinks=False)


def write_autograder(out, assignment: Assignment) -> int:
    """Write the autograder folder at `out` (absent or empty); returns its file count."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Classroom50Error(f"{out}: exists and is not an empty folder; remove it or name a new one")
    if not (assignment.handout / assignment.cases_dest / "points.json").is_file():
        raise Classroom50Error(f"{shown(assignment.handout)}: no public cases; run `make handout` first")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _fill(tmp, assignment)
        tmp.chmod(0o755)
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sum(len(files) for _, _, files in os.walk(out))
