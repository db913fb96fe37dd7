"""`grader grade` as a command: exit codes, the three reports, the forms a
submission takes (folder, zip, three flat files) and the grader's own failure."""

import csv
import dataclasses
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from catalogue import hostile

import grader.grading.report.orchestrate
import grader.grading.run.workers
from grader import HANDOUT, REFERENCE, ROOT, cli
from grader.core.assignment import Assignment
from grader.grading.run import expected, time_limits
from grader.shipped.cases import QUESTION

STUDENT_FILES = Assignment.hw1().student_files

REPORTS = {"results.json", "junit.xml", "report.md"}


@pytest.fixture
def handout(tmp_path_factory, monkeypatch):
    """The pristine handout; a copy of the reference's library stands in until it is generated."""
    if (HANDOUT / "python").is_dir():
        return HANDOUT
    fake = tmp_path_factory.mktemp("handout")
    for sub in ("python", "apps"):
        shutil.copytree(REFERENCE / sub, fake / sub, ignore=shutil.ignore_patterns("__pycache__"))
    stub = dataclasses.replace(Assignment.hw1(), handout=fake)
    monkeypatch.setattr(Assignment, "hw1", classmethod(lambda cls: stub))  # every RunConfig made from now on
    return fake


def grade_cli(*args):
    return cli.main(["grade", *map(str, args)])


def grader_process(*args, timeout):
    """`python -m grader ARGS...` as its own process, from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def results(out: Path) -> dict:
    assert REPORTS <= {p.name for p in out.iterdir()}
    return json.loads((out / "results.json").read_text())


def test_missing_path_is_a_usage_error_with_one_line(tmp_path):
    proc = grader_process("grade", tmp_path / "nope", "--out", tmp_path / "out", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"grader grade: {tmp_path / 'nope'}: no such file or folder"]
    assert not (tmp_path / "out").exists()


def test_the_grade_process_ends_at_once_with_its_output_and_its_exit_code(tmp_path):
    """`python -m grader grade` ends its process as soon as the grade is
    written (cli.ENDS_AT_ONCE, no interpreter teardown): what it printed
    still comes through a pipe, whole, and the exit status is the command's."""
    proc = grader_process("grade", REFERENCE, "--out", tmp_path / "out", timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip().splitlines()
    assert lines[0].startswith(f"{REFERENCE}: 100/100"), lines
    assert "| total | 105/105 | 100/100 |" in lines and lines[-1].startswith("Beyond the assignment"), lines
    assert results(tmp_path / "out")["score"] == 100
    assert cli.ENDS_AT_ONCE == {"grade", "grade-batch"}  # the server and the rest end the usual way


def test_the_batch_process_ends_at_once_with_its_summary_and_its_gradebook(tmp_path):
    """`python -m grader grade-batch` ends the same way, its pool shut down
    and its gradebook written: the summary comes through a pipe and the
    gradebook holds every submission."""
    for name in ("alice", "bob"):
        for sub in ("python", "apps"):
            shutil.copytree(
                REFERENCE / sub, tmp_path / "subs" / name / sub, ignore=shutil.ignore_patterns("__pycache__")
            )
    out = tmp_path / "out"
    proc = grader_process("grade-batch", tmp_path / "subs", "--out", out, "--jobs", "2", timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(
        rf"graded 2 submission\(s\) in [\d.]+ s; gradebook: {re.escape(str(out))}/gradebook.csv", proc.stdout.strip()
    )
    rows = list(csv.DictReader((out / "gradebook.csv").read_text().splitlines()))
    assert sorted(r["submission"] for r in rows) == ["alice", "bob"], rows
    assert all(float(r["total"]) == 100 and not r["reason"] for r in rows), rows
    assert all(results(out / name)["score"] == 100 for name in ("alice", "bob"))


@pytest.mark.parametrize("command", ["grade", "grade-batch"])
@pytest.mark.parametrize(
    "flag, message",
    [
        (
            ["--timeout", "0"],
            "--timeout 0: use a positive number (or leave --timeout out to scale the limits with this machine)",
        ),
        (["--memory-mb", "64"], "--memory-mb 64: use at least 128 MB"),
    ],
)
def test_nonsense_limits_are_usage_errors(tmp_path, command, flag, message):
    (tmp_path / "subs" / "a").mkdir(parents=True)
    args = (
        [str(tmp_path / "subs"), "--out", str(tmp_path / "out")]
        if command == "grade-batch"
        else [str(REFERENCE), "--out", str(tmp_path / "out")]
    )
    proc = grader_process(command, *args, *flag, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"grader {command}: {message}"]
    assert not (tmp_path / "out" / "results.json").exists()


def test_limit_flags_reach_every_question():
    args = cli_args(["grade", "x", "--timeout", "7", "--memory-mb", "512", "--tier", "rlimit"])
    config = grader.grading.run.config.config_from_args(args, 2, Assignment.hw1())
    assert config.tier == "rlimit" and config.jobs == 2
    reference = time_limits.ReferenceTimes({q: 1.0 for q in QUESTION}, workload_seconds=0.02)
    times = config.time_limits_now(reference)
    limits = {q: config.limits_for(q, times[q]) for q in QUESTION}
    assert {q: (lim.wall_seconds, lim.cpu_seconds) for q, lim in limits.items()} == {q: (7, 7) for q in QUESTION}
    assert limits["nn_epoch_ndl"].memory_mb == 1024 and limits["forward"].memory_mb == 512
    assert times["forward"].why == "limit: 7 s, set by --timeout"


def test_without_timeout_the_limits_scale_with_the_reference():
    config = grader.grading.run.config.config_from_args(cli_args(["grade", "x"]), 2, Assignment.hw1())
    assert config.limits.seconds is None
    reference = time_limits.ReferenceTimes({"forward": 0.4, "nn_epoch_ndl": 7.0}, workload_seconds=0.02)
    times = config.time_limits_now(reference)  # scaled by this machine's speed now: never below 1x
    assert times["nn_epoch_ndl"].seconds >= time_limits.MULTIPLE * 7.0
    assert times["forward"].seconds >= time_limits.FLOOR_SECONDS


def cli_args(argv):
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("submission")
    grader.grading.run.config.add_limit_arguments(parser)
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
    assert all("(given code)" in t["output"] for t in passed)  # the untouched handout scores 0
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
    rep, ok = grader.grading.report.orchestrate.grade_to(reference_zip(tmp_path / "sub.zip"), tmp_path / "out")
    assert ok and rep.score == 100 and rep.notes == ()
    assert results(tmp_path / "out")["score"] == 100


def symlink_entry():
    info = zipfile.ZipInfo("alice-hw1/apps/evil.py")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, "/etc/passwd"


@pytest.mark.parametrize(
    "entry, words",
    [
        ((zipfile.ZipInfo("alice-hw1/../../escape.py"), "x = 1"), "points outside the archive; refused"),
        (symlink_entry(), "is a symbolic link; refused"),
    ],
)
def test_unsafe_zip_is_refused_with_a_note(tmp_path, handout, entry, words):
    rep, ok = grader.grading.report.orchestrate.grade_to(
        reference_zip(tmp_path / "sub.zip", extra=[entry]), tmp_path / "out"
    )
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
    rep, ok = grader.grading.report.orchestrate.grade_to(sub, tmp_path / "out")
    assert ok and rep.notes == (
        "apps/simple_ml.py not found in the submission: graded with the handout's unsolved version",
    )
    scores = {q.key: q.score for q in rep.questions}
    assert scores["forward"] == 10 and scores["topo_sort"] == 20 and scores["compute_gradient"] == 25
    if handout == HANDOUT:  # with the real handout, simple_ml is a stub: Q5 is lost
        assert scores["softmax_loss_ndl"] < 10
    assert "apps/simple_ml.py not found" in results(tmp_path / "out")["output"]


def broken_load(config):
    raise RuntimeError("cache unreadable")


def test_grader_failure_still_writes_results_and_exits_1(tmp_path, handout, monkeypatch, capsys):
    monkeypatch.setattr(expected, "load", broken_load)
    rep, ok = grader.grading.report.orchestrate.grade_to(REFERENCE, tmp_path / "direct")
    assert not ok and rep.score == 0
    assert "grader error: RuntimeError: cache unreadable" in results(tmp_path / "direct")["output"]
    assert grade_cli(REFERENCE, "--out", tmp_path / "cli") == 1
    doc = results(tmp_path / "cli")
    assert doc["score"] == 0 and "cache unreadable" in doc["output"]
    assert "grader error: RuntimeError: cache unreadable" in capsys.readouterr().err


def test_missing_handout_is_a_grader_failure_that_says_what_to_run(tmp_path, monkeypatch):
    config = grader.grading.run.config.RunConfig(
        assignment=dataclasses.replace(Assignment.hw1(), handout=tmp_path / "no-handout")
    )
    rep, ok = grader.grading.report.orchestrate.grade_to(REFERENCE, tmp_path / "out", config)
    assert not ok and rep.score == 0
    assert "no-handout/python: missing" in rep.error and "run `make handout`" in rep.error
    assert json.loads((tmp_path / "out" / "results.json").read_text())["score"] == 0


# ---------------------------------------------------------------- unreadable submissions: exit 3, one line


def _patch_zip(path: Path, local_offset: int, central_offset: int, value: bytes) -> None:
    """Overwrite a field in every local header and central directory entry."""
    data = bytearray(path.read_bytes())
    for sig, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        at = data.find(sig)
        while at != -1:
            data[at + offset : at + offset + len(value)] = value
            at = data.find(sig, at + 4)
    path.write_bytes(bytes(data))


def bad_crc(path):
    reference_zip(path)
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x03\x04")
    start = (
        at + 30 + int.from_bytes(data[at + 26 : at + 28], "little") + int.from_bytes(data[at + 28 : at + 30], "little")
    )
    data[start + 5] ^= 0xFF  # a byte of the first entry's compressed data
    path.write_bytes(bytes(data))


def encrypted(path):
    reference_zip(path)
    _patch_zip(path, 6, 8, b"\x01\x00")  # general purpose flag bit 0: encrypted


def odd_compression(path):
    reference_zip(path)
    _patch_zip(path, 8, 10, (99).to_bytes(2, "little"))  # method 99 (AES): not readable here


def long_name(path):
    reference_zip(path, extra=[(zipfile.ZipInfo("alice-hw1/" + "x" * 300 + ".py"), "x = 1")])


def file_and_folder(path):
    reference_zip(path, extra=[(zipfile.ZipInfo("alice-hw1/apps"), "not a folder")])


def no_student_files(path):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("alice-hw1/README.md", "my homework")


def not_a_zip(path):
    path.write_text("just text")


@pytest.mark.parametrize(
    "make, words",
    [
        (not_a_zip, "not a readable zip file"),
        (bad_crc, "is damaged (Bad CRC-32"),
        (encrypted, "is encrypted; zip the folder again without a password"),
        (odd_compression, "uses compression method 99, which the grader cannot read"),
        (long_name, "has a name too long"),
        (file_and_folder, "both a file and a folder"),
        (
            no_student_files,
            "none of python/needle/autograd.py, python/needle/ops/ops_mathematic.py, apps/simple_ml.py found",
        ),
    ],
)
def test_unreadable_zip_exits_3_with_one_line_and_results_say_why(tmp_path, handout, make, words):
    make(tmp_path / "sub.zip")
    proc = grader_process("grade", tmp_path / "sub.zip", "--out", tmp_path / "out", timeout=120)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grader grade: ") and words in lines[0], lines
    doc = results(tmp_path / "out")
    assert doc["score"] == 0 and words in doc["output"]


def test_a_readable_zip_is_not_refused_by_these_checks(tmp_path):
    """Control for the test above: the unpatched zip extracts and locates."""
    from grader.grading.run.submission import extract_zip, locate

    reference_zip(tmp_path / "sub.zip")
    located = locate(extract_zip(tmp_path / "sub.zip", tmp_path / "x"), STUDENT_FILES)
    assert sorted(located.files) == sorted(STUDENT_FILES) and located.notes == ()


def test_backslash_zip_is_read_as_folders(tmp_path):
    from grader.grading.run.submission import extract_zip, locate

    with zipfile.ZipFile(tmp_path / "ps5.zip", "w") as archive:
        for rel in STUDENT_FILES:
            archive.write(REFERENCE / rel, "alice-hw1\\" + rel.replace("/", "\\"))
    located = locate(extract_zip(tmp_path / "ps5.zip", tmp_path / "x"), STUDENT_FILES)
    assert {rel: p.read_bytes() for rel, p in located.files.items()} == {
        rel: (REFERENCE / rel).read_bytes() for rel in STUDENT_FILES
    }


@pytest.mark.parametrize("entry", hostile.REFUSED, ids=lambda e: e.name)
def test_links_and_special_files_in_a_folder_are_refused(tmp_path, handout, entry):
    sub = tmp_path / "sub"
    sub.mkdir()
    entry.build(sub)
    assert grade_cli(sub, "--out", tmp_path / "out") == 3
    doc = results(tmp_path / "out")
    assert doc["score"] == 0 and entry.words in doc["output"]


def test_links_elsewhere_are_ignored(tmp_path):
    """Control: a data link and a .venv beside real files do not refuse the folder."""
    from grader.grading.run.submission import locate

    for rel in STUDENT_FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REFERENCE / rel, tmp_path / rel)
    (tmp_path / "data").symlink_to("/nonexistent")
    (tmp_path / "notes.txt").symlink_to("/etc/passwd")
    assert sorted(locate(tmp_path, STUDENT_FILES).files) == sorted(STUDENT_FILES)


# ---------------------------------------------------------------- a tier that cannot hide our files


def test_an_insecure_tier_is_refused_without_the_flag(tmp_path, handout, monkeypatch, capsys):
    monkeypatch.setattr(grader.sandbox, "security_problem", lambda tier, secrets=None: "a tier that hides nothing")
    rep, ok = grader.grading.report.orchestrate.grade_to(REFERENCE, tmp_path / "out")
    assert not ok and rep.score == 0
    assert "a tier that hides nothing" in rep.error and "pass --insecure" in rep.error
    assert "pass --insecure" in results(tmp_path / "out")["output"]


def test_a_secure_tier_needs_no_flag():
    """Control: as root, or with user namespaces, the probed tier is secure."""
    tier = grader.sandbox.probe()
    if tier == "rlimit" and os.geteuid() != 0:
        pytest.skip("a non-root user without user namespaces: no secure tier here")
    assert grader.sandbox.security_problem(tier) == ""


@pytest.mark.slow
@pytest.mark.sandbox
def test_insecure_flag_grades_and_the_report_says_so(tmp_path, handout, monkeypatch):
    monkeypatch.setattr(grader.sandbox, "security_problem", lambda tier, secrets=None: "a tier that hides nothing")
    config = grader.grading.run.config.RunConfig(insecure=True)
    rep, ok = grader.grading.report.orchestrate.grade_to(REFERENCE, tmp_path / "out", config)
    assert ok and rep.score == 100
    assert rep.notes[0] == "INSECURE: graded with --insecure: a tier that hides nothing"
    assert (
        "INSECURE" in (tmp_path / "out" / "report.md").read_text() and "INSECURE" in results(tmp_path / "out")["output"]
    )


# ---------------------------------------------------------------- the course's environment


def course_style_submission(dest: Path) -> Path:
    """The reference as real students wrote it, run from the homework root:
    a package import from the root, a debug log written to the working
    directory, and an nn_epoch that keeps 1.5 GB resident once it has run
    (as the largest correct solutions peak; allocated once per process: a
    fresh 1.5 GB at every call takes 1-3 s of page zeroing here, which
    would test the machine's memory, not the grader)."""
    for rel in STUDENT_FILES:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REFERENCE / rel, dest / rel)
    simple_ml = dest / "apps" / "simple_ml.py"
    text = simple_ml.read_text()
    text = text.replace(
        "import needle as ndl\n",
        "import needle as ndl\nfrom python.needle.ops import *  # noqa\n_HELD = []\n",
        1,
    )
    text = text.replace(
        "    # Q6\n",
        "    # Q6\n    if not _HELD:\n        _HELD.append(np.ones(1500 << 17))  # 1.5 GB, every page touched\n"
        "    with open('debug.log', 'a') as log:\n        log.write('epoch\\n')\n",
        1,
    )
    assert text.count("_HELD") == 3 and "from python.needle" in text
    simple_ml.write_text(text)
    return dest


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_course_style_submission_scores_100(tmp_path, handout):
    rep, ok = grader.grading.report.orchestrate.grade_to(course_style_submission(tmp_path / "sub"), tmp_path / "out")
    failed = [c.output for c in rep.cases if not c.passed]
    assert ok and rep.score == 100, failed[:5]
