"""`grader grade` as a command: exit codes, the three reports, the forms a
submission takes (folder, zip, three flat files) and the grader's own failure."""
import json
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import grader.grade
import grader.workers
from grader import HANDOUT, REFERENCE, ROOT, cli, expected
from grader.submission import STUDENT_FILES

REPORTS = {"results.json", "junit.xml", "report.md"}


@pytest.fixture
def handout(tmp_path_factory, monkeypatch):
    """The pristine handout; a copy of the reference's library stands in until it is generated."""
    if (HANDOUT / "python").is_dir():
        return HANDOUT
    fake = tmp_path_factory.mktemp("handout")
    for sub in ("python", "apps"):
        shutil.copytree(REFERENCE / sub, fake / sub, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(grader.workers, "HANDOUT", fake)
    monkeypatch.setattr(grader.grade, "HANDOUT", fake)
    return fake


def grade_cli(*args):
    return cli.main(["grade", *map(str, args)])


def results(out: Path) -> dict:
    assert REPORTS <= {p.name for p in out.iterdir()}
    return json.loads((out / "results.json").read_text())


def test_missing_path_is_a_usage_error_with_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", str(tmp_path / "nope"), "--out",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"grader grade: {tmp_path / 'nope'}: no such file or folder"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["grade", "grade-batch"])
@pytest.mark.parametrize("flag", [["--timeout", "0"], ["--memory-mb", "64"]])
def test_nonsense_limits_are_usage_errors(tmp_path, command, flag):
    (tmp_path / "subs" / "a").mkdir(parents=True)
    args = [str(tmp_path / "subs"), "--out", str(tmp_path / "out")] if command == "grade-batch" \
        else [str(REFERENCE), "--out", str(tmp_path / "out")]
    proc = subprocess.run([sys.executable, "-m", "grader", command, *args, *flag], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"grader {command}: --timeout must be positive and --memory-mb at least 128"]
    assert not (tmp_path / "out" / "results.json").exists()


def test_limit_flags_reach_every_question():
    args = cli_args(["grade", "x", "--timeout", "7", "--memory-mb", "512", "--tier", "rlimit"])
    config = grader.workers.config_from_args(args, 2)
    assert config.tier == "rlimit" and config.jobs == 2
    assert {q: (lim.wall_seconds, lim.cpu_seconds) for q, lim in config.limits.items()} == \
        {q: (7, 7) for q in config.limits}
    assert config.limits["nn_epoch_ndl"].memory_mb == 1024 and config.limits["forward"].memory_mb == 512


def cli_args(argv):
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("submission")
    grader.workers.add_limit_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.slow
@pytest.mark.sandbox
def test_reference_scores_100(tmp_path, handout, capsys):
    assert grade_cli(REFERENCE, "--out", tmp_path) == 0
    doc = results(tmp_path)
    assert doc["score"] == 100 and all(t["status"] == "passed" for t in doc["tests"])
    assert "| total |" in capsys.readouterr().out and "# needle hw1: 100 / 100" in (tmp_path / "report.md").read_text()


@pytest.mark.slow
@pytest.mark.sandbox
def test_handout_scores_nothing_but_the_given_code(tmp_path, handout):
    if handout != HANDOUT:
        pytest.skip("the stand-in handout is the reference: no stubs to grade")
    assert grade_cli(HANDOUT, "--out", tmp_path) == 0
    doc = results(tmp_path)
    failed = [t for t in doc["tests"] if t["status"] == "failed"]
    passed = [t for t in doc["tests"] if t["status"] == "passed"]
    assert failed and all("not implemented: Q" in t["output"] for t in failed)
    assert all("(given code)" in t["output"] for t in passed)  # DESIGN: the untouched handout scores 0
    assert doc["score"] == pytest.approx(sum(t["score"] for t in passed)) and doc["score"] < 1


def reference_zip(path: Path, top="alice-hw1", extra=()):
    with zipfile.ZipFile(path, "w") as archive:
        for rel in STUDENT_FILES:
            archive.write(REFERENCE / rel, f"{top}/{rel}")
        for info, data in extra:
            archive.writestr(info, data)
    return path


@pytest.mark.slow
@pytest.mark.sandbox
def test_zip_of_a_nested_handout_folder_scores_100(tmp_path, handout):
    rep, ok = grader.grade.grade_to(reference_zip(tmp_path / "sub.zip"), tmp_path / "out")
    assert ok and rep.score == 100 and rep.notes == ()
    assert results(tmp_path / "out")["score"] == 100


def symlink_entry():
    info = zipfile.ZipInfo("alice-hw1/apps/evil.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, "/etc/passwd"


@pytest.mark.parametrize("entry, words", [
    ((zipfile.ZipInfo("alice-hw1/../../escape.py"), "x = 1"), "points outside the archive; refused"),
    (symlink_entry(), "is a symbolic link; refused"),
])
def test_unsafe_zip_is_refused_with_a_note(tmp_path, handout, entry, words):
    rep, ok = grader.grade.grade_to(reference_zip(tmp_path / "sub.zip", extra=[entry]), tmp_path / "out")
    doc = results(tmp_path / "out")
    assert ok and rep.score == 0 and doc["score"] == 0
    assert words in doc["output"] and words in (tmp_path / "out" / "report.md").read_text()
    assert not (tmp_path / "escape.py").exists() and not (tmp_path.parent / "escape.py").exists()


@pytest.mark.slow
@pytest.mark.sandbox
def test_three_flat_files_score_100(tmp_path, handout):
    flat = tmp_path / "flat"
    flat.mkdir()
    for rel in STUDENT_FILES:
        shutil.copyfile(REFERENCE / rel, flat / Path(rel).name)
    assert grade_cli(flat, "--out", tmp_path / "out") == 0
    assert results(tmp_path / "out")["score"] == 100


@pytest.mark.slow
@pytest.mark.sandbox
def test_missing_file_gets_a_note_and_loses_its_questions(tmp_path, handout):
    sub = tmp_path / "sub"
    for rel in STUDENT_FILES[:2]:  # no apps/simple_ml.py
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REFERENCE / rel, sub / rel)
    rep, ok = grader.grade.grade_to(sub, tmp_path / "out")
    assert ok and rep.notes == ("apps/simple_ml.py not found in the submission: graded with the "
                                "handout's unsolved version",)
    scores = {q.key: q.score for q in rep.questions}
    assert scores["forward"] == 10 and scores["topo_sort"] == 20 and scores["compute_gradient"] == 25
    if handout == HANDOUT:  # with the real handout, simple_ml is a stub: Q5 is lost
        assert scores["softmax_loss_ndl"] < 10
    assert "apps/simple_ml.py not found" in results(tmp_path / "out")["output"]


def broken_load(config):
    raise RuntimeError("cache unreadable")


def test_grader_failure_still_writes_results_and_exits_1(tmp_path, handout, monkeypatch, capsys):
    monkeypatch.setattr(expected, "load", broken_load)
    rep, ok = grader.grade.grade_to(REFERENCE, tmp_path / "direct")
    assert not ok and rep.score == 0
    assert "grader error: RuntimeError: cache unreadable" in results(tmp_path / "direct")["output"]
    assert grade_cli(REFERENCE, "--out", tmp_path / "cli") == 1
    doc = results(tmp_path / "cli")
    assert doc["score"] == 0 and "cache unreadable" in doc["output"]
    assert "grader error: RuntimeError: cache unreadable" in capsys.readouterr().err


def test_missing_handout_is_a_grader_failure_that_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setattr(grader.workers, "HANDOUT", tmp_path / "no-handout")
    monkeypatch.setattr(grader.grade, "HANDOUT", tmp_path / "no-handout")
    rep, ok = grader.grade.grade_to(REFERENCE, tmp_path / "out")
    assert not ok and rep.score == 0
    assert "no-handout/python: missing" in rep.error and "run `make handout`" in rep.error
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 0
