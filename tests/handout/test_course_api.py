"""The handout offers exactly the course's API: every function, class,
method and module-level name of the course's hw1 files, with the course's
signatures (defaults and type hints), and nothing more. A student who
follows the course's handout, or pastes code written against it, meets the
same names; no extra stub asks for work the course never asked for.

The course's API is recorded as data (course_api.json, by
`python -m grader.handout.api GIT_DIR` from the course's repository); the
last test re-derives it when a copy of that repository is at hand."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from grader import HANDOUT, REFERENCE
from grader.handout.api import COURSE_FILES, differences, public_api, record, signature

RECORD = Path(__file__).with_name("course_api.json")
# A git directory of the course's hw1 repository, if this machine has one.
COURSE_GIT = Path(os.environ.get("COURSE_HW1_GIT", "/work/.mirror/dlsyscourse+hw1/repo"))


def course():
    return json.loads(RECORD.read_text())


def test_the_record_covers_the_course_files():
    files = course()["files"]
    assert sorted(files) == sorted(COURSE_FILES)
    ops = files["python/needle/ops/ops_mathematic.py"]
    assert "Summation.gradient" in ops and "_sum_to_shape" not in ops
    assert course()["source"].startswith("dlsyscourse/hw1 at ")


@pytest.mark.parametrize("tree", ["handout", "reference"])
@pytest.mark.parametrize("rel", COURSE_FILES)
def test_api_is_the_courses(tree, rel):
    root = {"handout": HANDOUT, "reference": REFERENCE}[tree]
    got = public_api((root / rel).read_text())
    problems = differences(course()["files"][rel], got)
    assert not problems, f"{tree}/{rel} differs from the course's API:\n  " + "\n  ".join(problems)


def test_differences_name_missing_extra_and_changed():
    want = public_api("class A:\n    def f(self, x: int = 1): pass\n\ndef g(a): pass\n")
    got = public_api("class A:\n    def f(self, x=1): pass\n    def h(self): pass\n")
    lines = differences(want, got)
    assert "missing: g def (a)" in lines
    assert "extra: A.h def (self)" in lines
    assert any(line.startswith("differs: A.f:") and "x: int = 1" in line for line in lines)


def test_signature_keeps_decorators_kinds_and_hints():
    fn = public_api("@staticmethod\ndef f(a, /, b: int = 2, *c, d, **e) -> 'T': pass\n")["f"]
    assert fn == "@staticmethod def (a, /, b: int = 2, *c, d, **e) -> 'T'"
    assert public_api("import numpy as np\nX = 1\n") == {"X": "attribute"}
    assert callable(signature)


@pytest.mark.skipif(not COURSE_GIT.is_dir(), reason="no copy of the course's hw1 repository here")
def test_record_is_what_the_course_files_say():
    commit = course()["source"].split(" at ")[1].split(",")[0]
    try:
        fresh = record(str(COURSE_GIT), commit)
    except subprocess.CalledProcessError:
        pytest.skip(f"the course repository here lacks commit {commit}")
    assert fresh["files"] == course()["files"], "re-record: python -m grader.handout.api " + str(COURSE_GIT)
