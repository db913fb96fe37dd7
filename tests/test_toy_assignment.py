"""The assignment is data: a toy second assignment, written in a temporary
folder (tests/fixtures/toy.py), goes through `grader handout`,
`check-handout`, `grade`, `grade-batch`, and the server's publish and submit
with --assignment FOLDER alone, and nothing under grader/ changes."""

import csv
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "fixtures"))
sys.path.insert(0, str(HERE / "fixtures" / "server"))
from server_harness import REPO, Server, add_user, child_env  # noqa: E402
from toy import student_copy, write_toy  # noqa: E402

pytestmark = [pytest.mark.sandbox, pytest.mark.server]


def grader_tree_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((REPO / "grader").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    before = grader_tree_digest()
    folder = SimpleNamespace(path=write_toy(tmp_path_factory.mktemp("toy")), cache=tmp_path_factory.mktemp("cache"))
    r = run(folder, "handout", "--assignment", str(folder.path))
    assert r.returncode == 0, r.stdout + r.stderr
    folder.built = r.stdout
    yield folder
    assert grader_tree_digest() == before, "a command wrote under grader/"


def run(toy, *args, cwd=None):
    """`python -m grader ARGS` from outside the repository, with a private answer cache."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd or toy.path.parent,
        env=child_env(GRADER_CACHE=str(toy.cache)),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_handout_strips_the_toy_solution_and_ships_its_public_cases(toy):
    assert "public tests checked" in toy.built and "no leak" in toy.built
    ops = (toy.path / "handout/python/toy/ops.py").read_text()
    assert 'raise NotImplementedError("Q1: double")' in ops and 'raise NotImplementedError("Q2: square")' in ops
    assert "** 2" not in ops and "2 * np.asarray" not in ops
    cases = toy.path / "handout/tests/toy/toy_cases"
    shipped = (cases / "__init__.py").read_text()
    assert "double_range" in shipped and "square_range" not in shipped  # the hidden row stays behind
    points = json.loads((cases / "points.json").read_text())
    assert [(q["key"], q["points"], q["hidden_cases"]) for q in points["questions"]] == [
        ("double", 40, 0),
        ("square", 60, 1),
    ]
    assert points["cases"] == {"double_range": 40.0}
    assert (toy.path / "handout/mugrade.py").is_file() and (toy.path / "reference/mugrade.py").is_file()
    assert (toy.path / "reference/tests/toy/toy_cases/expected/double_range.json").is_file()


def test_check_handout_passes_then_names_a_stale_file(toy):
    r = run(toy, "check-handout", "--assignment", str(toy.path))
    assert r.returncode == 0 and "up to date" in r.stdout, r.stderr
    ops = toy.path / "reference/python/toy/ops.py"
    original = ops.read_text()
    try:
        ops.write_text(original.replace('"""2 * x,', '"""Twice x,'))
        r = run(toy, "check-handout", "--assignment", str(toy.path))
        assert r.returncode == 1 and "python/toy/ops.py" in r.stderr
    finally:
        ops.write_text(original)


def results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text())


def test_grade_scores_the_reference_100_and_the_handout_0(toy, tmp_path):
    r = run(toy, "grade", "--assignment", str(toy.path), "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    reference, handout = results(tmp_path / "reference"), results(tmp_path / "handout")
    assert reference["score"] == 100 and handout["score"] == 0
    assert reference["output"].startswith("needle toy: 100 / 100")
    assert {t["name"]: t["max_score"] for t in reference["tests"]} == {"double_range": 40, "square_range": 60}
    assert "not implemented: Q1" in next(t for t in handout["tests"] if t["name"] == "double_range")["output"]


def test_grade_costs_a_wrong_question_its_points_only(toy, tmp_path):
    wrong = student_copy(toy.path, tmp_path / "bob", square="np.asarray(x, dtype=np.float64) ** 3")
    r = run(toy, "grade", str(wrong), "--assignment", str(toy.path), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    doc = results(tmp_path / "out")
    assert doc["score"] == 40
    assert doc["extra_data"]["questions"] == {
        "double": {"score": 40, "max_score": 40},
        "square": {"score": 0, "max_score": 60},
    }
    square = next(t for t in doc["tests"] if t["name"] == "square_range")
    assert square["visibility"] == "after_published" and "[1.0, 0.0, 1.0]" not in square["output"]
    assert re.search(r"\| Q2 square \| 0/1 \| 0/60 \|", r.stdout)


def test_grade_batch_writes_one_column_per_toy_question(toy, tmp_path):
    subs = tmp_path / "subs"
    student_copy(toy.path, subs / "alice")
    student_copy(toy.path, subs / "bob", double="3 * np.asarray(x, dtype=np.float64)")
    r = run(toy, "grade-batch", str(subs), "--out", str(tmp_path / "out"), "--jobs", "2", "--assignment", str(toy.path))
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader((tmp_path / "out/gradebook.csv").read_text().splitlines()))
    assert [row[:5] for row in rows] == [
        ["submission", "double", "square", "total", "reason"],
        ["alice", "40", "60", "100", ""],
        ["bob", "0", "60", "60", ""],
    ]
    assert rows[0][5:] == ["submission_sha256", "commit"] and len(rows[1][5]) == 64


def test_a_bad_assignment_folder_is_one_line_and_exit_2(toy, tmp_path):
    r = run(toy, "grade", "--assignment", str(tmp_path), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert (
        r.stderr.strip() == f"grader grade: {tmp_path}/assignment.toml: not found; an assignment "
        "folder needs an assignment.toml"
    )
    assert not (tmp_path / "out").exists()


def summary(stdout: str) -> dict:
    tail = stdout.split("summary (")[-1]
    return dict(re.findall(r"^  (\w+)\s+(\d+/\d+) cases (?:correct|published)", tail, re.M))


def test_publish_and_submit_the_toy_on_a_real_server(toy, tmp_path):
    server = Server(tmp_path / "grader.db")
    prof, bob = add_user(server.db_url, "prof", "instructor"), add_user(server.db_url, "bob")
    server.start()
    try:
        r = run(toy, "publish", "--assignment", str(toy.path), "--key", prof, "--server", server.url)
        assert r.returncode == 0, r.stdout + r.stderr
        assert re.search(r"^  double\s+1 cases published$", r.stdout, re.M), r.stdout
        wrong = student_copy(toy.path, tmp_path / "bob", square="np.asarray(x, dtype=np.float64) * 2")
        r = run(toy, "submit", bob, "toy", "--server", server.url, cwd=wrong)
        assert r.returncode == 0, r.stdout + r.stderr
        assert summary(r.stdout) == {"double": "1/1", "square": "0/1"}
        book = requests.get(server.url + "gradebook.csv", headers={"Authorization": f"Bearer {prof}"}, timeout=10).text
        header, *rows = list(csv.reader(book.splitlines()))
        row = dict(zip(header, next(r for r in rows if r[0] == "bob")))
        assert (row["toy/double"], row["toy/square"]) == ("100.00", "0.00")
    finally:
        server.stop()
