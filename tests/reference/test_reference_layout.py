"""The reference is laid out as the handout generator and students expect:
solution markers balanced and tagged with their question, and the course's
import lines work from reference/."""
import re
import subprocess
import sys

import pytest

from grader import REFERENCE

BEGIN = "### BEGIN YOUR SOLUTION"
END = "### END YOUR SOLUTION"
TAG = re.compile(r"^# Q[1-6]$")

SOURCES = sorted(REFERENCE.glob("python/**/*.py")) + sorted(REFERENCE.glob("apps/*.py"))


def marker_problems(lines):
    """Reasons the marker lines of one file are wrong (a plain line scan)."""
    problems, open_at = [], None
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text == BEGIN:
            if open_at is not None:
                problems.append(f"line {number}: BEGIN inside the block opened at line {open_at}")
            open_at = number
            above = lines[number - 2].strip() if number > 1 else ""
            if not TAG.match(above):
                problems.append(f"line {number}: BEGIN without a '# Qn' tag on the line above")
        elif text == END:
            if open_at is None:
                problems.append(f"line {number}: END without a BEGIN")
            open_at = None
        elif "YOUR SOLUTION" in text:
            problems.append(f"line {number}: malformed marker {text!r}")
    if open_at is not None:
        problems.append(f"line {open_at}: BEGIN never closed")
    return problems


def test_marker_scan_catches_untagged_unbalanced_and_nested_blocks():
    lines = ["    # Q2", f"    {BEGIN}", f"    {BEGIN}", f"    {END}", f"    {END}", BEGIN, "x = 1"]
    assert marker_problems(lines) == [
        "line 3: BEGIN inside the block opened at line 2",
        "line 3: BEGIN without a '# Qn' tag on the line above",
        "line 5: END without a BEGIN",
        "line 6: BEGIN without a '# Qn' tag on the line above",
        "line 6: BEGIN never closed",
    ]


def test_the_sources_are_the_ones_students_edit():
    names = {p.relative_to(REFERENCE).as_posix() for p in SOURCES}
    assert {"python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REFERENCE).as_posix())
def test_markers_are_balanced_and_tagged(path):
    assert marker_problems(path.read_text().splitlines()) == []


def test_every_question_has_a_block():
    tags = set()
    for path in SOURCES:
        lines = path.read_text().splitlines()
        tags |= {lines[i - 1].strip() for i, line in enumerate(lines) if line.strip() == BEGIN and i > 0}
    assert tags == {f"# Q{n}" for n in range(1, 7)}


def test_the_course_import_lines_work_from_reference():
    code = ("import sys; sys.path += ['python', 'apps']; import needle, simple_ml; "
            "print(needle.__file__); print(simple_ml.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REFERENCE, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    needle_file, simple_ml_file = out.stdout.split()
    assert needle_file.startswith(str(REFERENCE / "python" / "needle"))
    assert simple_ml_file.startswith(str(REFERENCE / "apps"))
