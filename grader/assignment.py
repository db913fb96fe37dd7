"""Where an assignment's parts live, as one object passed in (inside
RunConfig) instead of path globals: the reference solution, the pristine
handout, the data folder the workers see read-only, the cases package the
sandboxed worker loads, and the student files a submission overlays.

`Assignment.hw1()` is this repository's layout. `Assignment.load(folder)`
reads `folder/assignment.toml`, paths relative to the folder:

    name = "toy"
    reference = "reference"
    handout = "handout"
    data = "data"
    cases = "cases"
    student_files = ["python/needle/autograd.py"]
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
HW1_STUDENT_FILES = (
    "python/needle/autograd.py",
    "python/needle/ops/ops_mathematic.py",
    "apps/simple_ml.py",
)
FIELDS = ("name", "reference", "handout", "data", "cases", "student_files")


class AssignmentError(ValueError):
    """assignment.toml is missing or wrong; the message names the file and field."""


@dataclass(frozen=True)
class Assignment:
    name: str
    reference: Path       # the instructor's solution
    handout: Path         # the pristine handout every submission is overlaid on
    data: Path            # mounted read-only as data/ beside the worker
    cases_dir: Path       # the cases package (imports nothing from grader)
    student_files: tuple  # handout-relative paths a submission provides

    @classmethod
    def hw1(cls) -> "Assignment":
        return cls("hw1", ROOT / "reference", ROOT / "handout", ROOT / "data",
                   ROOT / "grader" / "untrusted" / "cases", HW1_STUDENT_FILES)

    @classmethod
    def load(cls, folder) -> "Assignment":
        folder = Path(folder)
        path = folder / "assignment.toml"
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AssignmentError(f"{path}: not found; an assignment folder needs an assignment.toml") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise AssignmentError(f"{path}: not valid TOML ({e})") from None
        unknown = sorted(set(raw) - set(FIELDS))
        if unknown:
            raise AssignmentError(f"{path}: unknown field {unknown[0]!r}; the fields are {', '.join(FIELDS)}")
        for name in FIELDS[:5]:
            if not isinstance(raw.get(name), str) or not raw[name]:
                raise AssignmentError(f"{path}: field {name!r}: give a non-empty string")
        files = raw.get("student_files")
        if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
            raise AssignmentError(f"{path}: field 'student_files': give a non-empty list of relative paths")
        parts = {n: (folder / raw[n]).resolve() for n in ("reference", "handout", "data", "cases")}
        if not (parts["cases"] / "__init__.py").is_file():
            raise AssignmentError(f"{path}: field 'cases': {parts['cases']} is not a package (no __init__.py)")
        return cls(raw["name"], parts["reference"], parts["handout"], parts["data"], parts["cases"], tuple(files))
