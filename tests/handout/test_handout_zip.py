"""`make zip` in the handout writes exactly the upload `grader grade` and
Gradescope take: the three student files at their handout paths, nothing
else, found by the grader's own submission reader."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.core.assignment import Assignment
from grader.grading.run.submission import extract_zip, locate

ROOT = Path(__file__).resolve().parents[2]
HANDOUT = ROOT / "handout"
STUDENT_FILES = Assignment.hw1().student_files


@pytest.fixture
def homework(tmp_path):
    root = tmp_path / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("__pycache__", ".venv", "data"))
    (root / "python/needle/autograd.py").write_text((root / "python/needle/autograd.py").read_text()
                                                    + "\n# mine\n")
    (root / "notes.txt").write_text("not part of the upload\n")
    return root


def make_zip(root):
    return subprocess.run(["make", "-s", "zip"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})


def test_make_zip_holds_exactly_the_student_files(homework):
    run = make_zip(homework)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().startswith("hw1-submission.zip: ")
    with zipfile.ZipFile(homework / "hw1-submission.zip") as archive:
        assert sorted(archive.namelist()) == sorted(STUDENT_FILES)
        assert archive.read("python/needle/autograd.py").decode().endswith("# mine\n")


def test_the_grader_reads_every_file_of_the_zip(homework, tmp_path):
    assert make_zip(homework).returncode == 0
    for where in ("grade", "gradescope"):  # grade extracts it; Gradescope unpacks it into submission/
        dest = tmp_path / where
        dest.mkdir()
        extract_zip(homework / "hw1-submission.zip", dest)
        located = locate(dest, STUDENT_FILES)
        assert sorted(located.files) == sorted(STUDENT_FILES) and not located.notes
        assert located.files["python/needle/autograd.py"].read_text().endswith("# mine\n")


def test_a_missing_file_is_one_line_saying_which(homework):
    (homework / "apps/simple_ml.py").unlink()
    run = make_zip(homework)
    assert run.returncode != 0 and not (homework / "hw1-submission.zip").exists()
    assert run.stderr.splitlines()[0] == ("make zip: apps/simple_ml.py not found: run this in your hw1 folder, "
                                          "with your files in place"), run.stderr


def test_the_zip_is_git_ignored():
    assert "hw1-submission.zip" in (HANDOUT / ".gitignore").read_text().splitlines()
