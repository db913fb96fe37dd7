"""`grader grade-batch`: parallel grading into a gradebook, resumable, and
one bad submission never stops the batch."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from grader import HANDOUT, REFERENCE, ROOT, cli
from grader.grading.batch import book as batch_book
from grader.grading.batch import names as batch_names
from grader.grading.batch import run as batch
from grader.grading.batch.jobs import record_failure
from grader.shipped.cases import QUESTIONS

# The CLI runs in a subprocess: it needs the real handout.
needs_handout = pytest.mark.skipif(
    not (HANDOUT / "python").is_dir(), reason="handout/ not generated yet: run `make handout`"
)


def sandboxed(test):
    return pytest.mark.slow(pytest.mark.sandbox(needs_handout(test)))


ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def library_copy(src: Path, dest: Path) -> Path:
    for sub in ("python", "apps"):
        shutil.copytree(src / sub, dest / sub, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def zip_of(src: Path, dest: Path) -> Path:
    """A zip of src's python/ and apps/, as a student would upload it."""
    with zipfile.ZipFile(dest, "w") as archive:
        for sub in ("python", "apps"):
            for path in sorted((src / sub).rglob("*.py")):
                archive.write(path, path.relative_to(src).as_posix())
    return dest


@pytest.fixture(scope="module")
def subs(tmp_path_factory):
    root = tmp_path_factory.mktemp("subs")
    library_copy(REFERENCE, root / "alice")
    zip_of(HANDOUT, root / "alice.zip")  # same stem as a folder
    library_copy(HANDOUT, root / "bob")
    (root / "carol.zip").write_bytes(b"this is not a zip")
    zip_of(REFERENCE, root / "carol.ZIP")  # differs only in the case of the suffix
    zip_of(REFERENCE, root / "gradebook.csv.zip")  # would be the gradebook's own name
    (root / "notes.txt").write_text("not a submission")
    return root


def grade_batch_cli(*args):
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade-batch", *map(str, args)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, time.monotonic() - start


def gradebook(out: Path) -> dict:
    with open(out / "gradebook.csv", newline="") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


def results(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text())


@pytest.fixture(scope="module")
def first_run(subs, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    proc, seconds = grade_batch_cli(subs, "--jobs", "2", "--out", out)
    return out, proc, seconds


@sandboxed
def test_batch_grades_each_submission_into_a_gradebook(first_run, subs):
    out, proc, _ = first_run
    assert proc.returncode == 0, proc.stderr
    book = gradebook(out)
    by_entry = {path.name: name for name, path in batch_names.find_submissions(subs)}
    carol_zip, carol_ZIP = by_entry["carol.zip"], by_entry["carol.ZIP"]
    assert sorted(book) == sorted(["alice", "alice.zip", "bob", carol_zip, carol_ZIP, "gradebook.csv.zip"])
    assert list(book["alice"])[1:] == [
        "forward",
        "backward",
        "topo_sort",
        "compute_gradient",
        "softmax_loss_ndl",
        "nn_epoch_ndl",
        "total",
        "reason",
        "submission_sha256",
        "commit",
    ]
    assert book["alice"]["submission_sha256"] == results(out, "alice")["extra_data"]["provenance"]["submission_sha256"]
    assert book["alice.zip"]["submission_sha256"] == book["bob"]["submission_sha256"]  # the same handout files
    assert book["alice"]["total"] == "100" and book["alice"]["backward"] == "25"
    assert book["alice"]["reason"] == "" and book["bob"]["reason"] == ""
    assert book["alice.zip"]["total"] == book["bob"]["total"] != "100"  # the handout, not alice's folder
    assert book[carol_zip]["total"] == "0" and book[carol_ZIP]["total"] == "100"
    assert "not a readable zip" in results(out, carol_zip)["output"]
    assert "not a readable zip" in book[carol_zip]["reason"] and book[carol_ZIP]["reason"] == ""
    assert book["gradebook.csv.zip"]["total"] == "100"
    for name in book:
        assert {"results.json", "junit.xml", "report.md"} <= {p.name for p in (out / name).iterdir()}


@sandboxed
def test_batch_stub_scores_only_the_given_code(first_run):
    out, _, _ = first_run
    bob = results(out, "bob")
    passed = [t for t in bob["tests"] if t["status"] == "passed"]
    assert all("(given code)" in t["output"] for t in passed)
    assert all("not implemented: Q" in t["output"] for t in bob["tests"] if t["status"] == "failed")
    assert gradebook(out)["bob"]["total"] == batch.report.fmt_points(bob["score"])
    assert bob["score"] < 1


@sandboxed
def test_batch_progress_without_tty_prints_a_line_per_submission(first_run):
    _, proc, _ = first_run
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 6 and lines[-1].startswith("[" + "#" * 24 + "] 6/6")
    assert all("ETA" in line for line in lines) and "\r" not in proc.stderr


@sandboxed
def test_batch_second_run_skips_all_and_force_regrades(first_run, subs):
    out, _, first_seconds = first_run
    stamp = (out / "alice" / "results.json").stat().st_mtime_ns
    proc, seconds = grade_batch_cli(subs, "--jobs", "2", "--out", out)
    assert proc.returncode == 0 and "skipped 6 already graded" in proc.stderr
    assert seconds < first_seconds / 2  # nothing graded: just start-up
    assert (out / "alice" / "results.json").stat().st_mtime_ns == stamp
    assert gradebook(out)["alice"]["total"] == "100"  # rebuilt from every results.json
    proc, _ = grade_batch_cli(subs, "--jobs", "2", "--out", out, "--force")
    assert proc.returncode == 0 and "skipped" not in proc.stderr
    assert (out / "alice" / "results.json").stat().st_mtime_ns != stamp
    assert gradebook(out)["alice"]["total"] == "100"


def test_resumed_batch_gradebook_keeps_earlier_submissions(tmp_path):
    out = tmp_path / "out"
    (out / "dave").mkdir(parents=True)
    (out / "dave" / "results.json").write_text(
        json.dumps(
            {
                "score": 42.5,
                "output": "header",
                "tests": [{"name": "x"}],
                "extra_data": {"questions": {"backward": {"score": 25}, "forward": {"score": 17.5}}},
            }
        )
    )
    (out / "broken").mkdir()
    (out / "broken" / "results.json").write_text("{not json")
    (out / "empty").mkdir()  # no results.json: not a row
    batch_book.BatchGradebook(out, QUESTIONS).write()
    book = gradebook(out)
    assert list(book) == ["broken", "dave"]
    assert book["dave"]["total"] == "42.50" and book["dave"]["forward"] == "17.50"
    assert book["dave"]["topo_sort"] == "0" and book["dave"]["reason"] == ""
    assert book["broken"]["total"] == "" and "results.json is not valid" in book["broken"]["reason"]
    assert not batch.already_graded(out / "broken")  # unreadable results: graded again


def test_gradebook_reason_for_refused_failed_and_ungraded(tmp_path):
    refused = {
        "score": 0,
        "tests": [],
        "output": "needle hw1: 0 / 100 (sandbox: none)\nx.zip: not a readable zip file\nzip it again",
    }
    assert batch_book.row_from_results("x", refused, QUESTIONS)[-4:-2] == [
        "0",
        "x.zip: not a readable zip file | zip it again",
    ]
    graded = {**refused, "tests": [{"name": "a"}]}
    assert batch_book.row_from_results("x", graded, QUESTIONS)[-3] == ""
    assert batch_book.row_from_results("x", {"score": 0, "tests": []}, QUESTIONS)[-3] == "no case was run"
    row = batch_book.ungraded_row("y", "not graded: lost\nwith its worker", QUESTIONS)
    assert row == ["y", *[""] * 7, "not graded: lost | with its worker", "", ""]
    text = batch_book.render({"y": row, "b": batch_book.row_from_results("b", graded, QUESTIONS)}, QUESTIONS)
    assert text.splitlines()[0].endswith(",total,reason,submission_sha256,commit") and text.splitlines()[1].startswith(
        "b,"
    )


GOLDEN_BOOK = Path(__file__).parents[1] / "golden" / "batch" / "gradebook.csv"


def test_gradebook_writer_matches_golden():
    """Regenerate after an intended change with UPDATE_GOLDEN=1, then review the diff."""
    graded = {
        "score": 72.5,
        "output": "needle hw1: 72.50 / 100 (sandbox: bwrap)",
        "tests": [{"name": "a"}],
        "extra_data": {
            "questions": {
                "forward": {"score": 10},
                "backward": {"score": 12.5},
                "topo_sort": {"score": 20},
                "compute_gradient": {"score": 25},
                "softmax_loss_ndl": {"score": 5},
            },
            "provenance": {"submission_sha256": "5e" * 32, "git_commit": "c0ffee" + "0" * 34},
        },
    }
    refused = {
        "score": 0,
        "tests": [],
        "output": "needle hw1: 0 / 100 (sandbox: none)\n"
        "bob.zip: not a readable zip file (File is not a zip file); zip the handout folder again",
        "extra_data": {"provenance": {"submission_sha256": "0b" * 32}},
    }
    failed = {
        "score": 0,
        "tests": [],
        "output": "needle hw1: 0 / 100 (sandbox: none)\ngrader error: the grading process died on this submission",
    }
    rows = {
        "alice": batch_book.row_from_results("alice", graded, QUESTIONS),
        "bob.zip-1a2b3c4d": batch_book.row_from_results("bob.zip-1a2b3c4d", refused, QUESTIONS),
        "carol": batch_book.row_from_results("carol", failed, QUESTIONS),
        "dave": batch_book.ungraded_row("dave", batch_book.PENDING, QUESTIONS),
        "erin": batch_book.ungraded_row("erin", "not graded: KilledWorker: it killed 4 workers", QUESTIONS),
    }
    text = batch_book.render(rows, QUESTIONS)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN_BOOK.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_BOOK.write_text(text, encoding="utf-8")
    assert text == GOLDEN_BOOK.read_text(encoding="utf-8"), (
        f"{GOLDEN_BOOK} differs from the writer's output; if intended, run UPDATE_GOLDEN=1 and review the diff"
    )


FORMULA_NAMES = {
    '=HYPERLINK("x.example","click").zip': b"",
    "@SUM(1).zip": b"not a zip",
    "-1.zip": b"",
    "+1+1": None,
}  # None: an empty folder


def test_formula_names_are_text_in_the_gradebook_and_a_rerun_still_skips_them(tmp_path):
    """Submissions named like formulas (refused at once: empty zip, not a zip, empty folder)
    appear in gradebook.csv as text: a leading ' before = + - @, in the name and the reason;
    the scores stay bare numbers; a second run finds them graded (it reads the result
    folders, never the names in the CSV)."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    for entry, data in FORMULA_NAMES.items():
        if data is None:
            (subs / entry).mkdir()
        elif data:
            (subs / entry).write_bytes(data)
        else:
            zipfile.ZipFile(subs / entry, "w").close()
    proc, _ = grade_batch_cli(subs, "--jobs", "2", "--out", out)
    assert proc.returncode == 0, proc.stderr
    text = (out / "gradebook.csv").read_text(encoding="utf-8")
    header, *rows = list(csv.reader(text.splitlines()))
    assert [row[0] for row in rows] == ["'+1+1", "'-1", '\'=HYPERLINK("x.example","click")', "'@SUM(1)"]
    assert all(row[1:-3] == ["0"] * (len(header) - 4) for row in rows)  # numbers, not quoted
    assert all(row[-3] and row[-3][0] not in "=+-@\t\r" for row in rows)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [
        "+1+1",
        "-1",
        '=HYPERLINK("x.example","click")',
        "@SUM(1)",
    ]  # folders keep the real names
    again, _ = grade_batch_cli(subs, "--jobs", "2", "--out", out)
    assert again.returncode == 0 and "skipped 4 already graded" in again.stderr
    assert (out / "gradebook.csv").read_text(encoding="utf-8") == text


def test_gradebook_rows_quote_a_formula_name_and_reason_but_not_scores():
    refused = {
        "score": 0,
        "tests": [],
        "output": "needle hw1: 0 / 100 (sandbox: none)\n@SUM(1).zip: not a readable zip file",
    }
    graded = {
        "score": 72.5,
        "output": "",
        "tests": [{"name": "a"}],
        "extra_data": {"questions": {"forward": {"score": 10}}},
    }
    text = batch_book.render(
        {
            "@SUM(1)": batch_book.row_from_results("@SUM(1)", refused, QUESTIONS),
            "-1": batch_book.row_from_results("-1", graded, QUESTIONS),
            "=x": batch_book.ungraded_row("=x", "-lost", QUESTIONS),
        },
        QUESTIONS,
    )
    assert text.splitlines()[1:] == [
        "'-1,10,0,0,0,0,0,72.50,,,",
        "'=x,,,,,,,,'-lost,,",
        "'@SUM(1),0,0,0,0,0,0,0,'@SUM(1).zip: not a readable zip file,,",
    ]


def test_find_submissions_names_and_excludes_the_out_folder(tmp_path):
    for name in ("b", "a", "out", ".hidden"):
        (tmp_path / name).mkdir()
    for name in ("c.zip", "a.zip", "readme.md", "D.Zip"):
        (tmp_path / name).write_text("")
    found = batch.find_submissions(tmp_path, exclude=[tmp_path / "out"])
    assert [name for name, _ in found] == ["D", "a", "a.zip", "b", "c"]


@pytest.mark.parametrize(
    "entries",
    [
        ["alice.zip", "alice.ZIP"],
        ["alice/", "alice.zip"],
        ["alice/", "Alice.zip", "ALICE.ZIP"],
        ["Bob/", "bob/"],
        ["gradebook.csv.zip"],
        ["gradebook.csv/"],
        ["GRADEBOOK.CSV.zip", "gradebook.csv.ZIP"],
        ["a\nb.zip", "a\rb/"],
        ["x" * 250 + ".zip", "x" * 250 + "/"],
        [os.fsdecode(b"\xff\xfe.zip"), "\xff\xfe.zip"],
    ],
)
def test_output_names_never_collide_nor_take_the_gradebook(tmp_path, entries):
    for entry in entries:
        if entry.endswith("/"):
            (tmp_path / entry).mkdir()
        else:
            (tmp_path / entry).write_text("")
    paths = [tmp_path / e.rstrip("/") for e in entries if (tmp_path / e.rstrip("/")).exists()]
    names = batch_names.output_names(paths)
    assert len({n.casefold() for n in names}) == len(paths)  # distinct on a case-insensitive disk too
    assert all(n.casefold() != "gradebook.csv" and not n.startswith(".") for n in names)
    assert all(n.isprintable() and len(n.encode("utf-8")) <= 200 for n in names)  # one CSV line, a valid file name
    assert names == batch_names.output_names(paths)  # stable: a rerun resumes into the same folders


def crash_some(job):
    """A grading function that breaks on purpose (runs in the pool's processes)."""
    if job.name == "raises":
        raise RuntimeError("boom in the grader")
    if job.name == "dies":
        os._exit(3)  # the worker process vanishes: the pool breaks
    return batch.grade_one(job)


@sandboxed
def test_a_grader_crash_does_not_stop_the_batch(tmp_path):
    subs = tmp_path / "subs"
    ok = subs / "good"
    ok.mkdir(parents=True)
    for rel in ("python/needle/autograd.py", "python/needle/ops/ops_mathematic.py", "apps/simple_ml.py"):
        shutil.copyfile(REFERENCE / rel, ok / Path(rel).name)  # flat: just the three files
    (subs / "raises").mkdir()
    (subs / "dies").mkdir()
    out = tmp_path / "out"
    stream = io.StringIO()
    done, skipped = batch.grade_batch(subs, out, jobs=2, grade_fn=crash_some, stream=stream)
    by_name = {d.name: d for d in done}
    assert sorted(by_name) == ["dies", "good", "raises"] and skipped == []
    assert by_name["good"].ok and by_name["good"].score == 100
    assert not by_name["raises"].ok and "boom in the grader" in by_name["raises"].error
    assert "grading process died" in results(out, "dies")["output"]
    assert results(out, "raises")["score"] == 0
    assert gradebook(out)["good"]["total"] == "100" and gradebook(out)["dies"]["total"] == "0"
    assert stream.getvalue().count("\n") == 3 and "raises: 0 (grader error)" in stream.getvalue()


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_tty_redraws_one_line_with_eta():
    stream = FakeTTY()
    progress = batch.Progress(2, stream)
    progress.update(batch.Done("alice", 100.0, True, 1.0))
    assert stream.getvalue().startswith("\r[############------------] 1/2") and "\n" not in stream.getvalue()
    progress.update(batch.Done("bob", 12.5, True, 1.0))
    assert stream.getvalue().count("\r") == 2 and stream.getvalue().endswith("last bob: 12.50\033[K\n")
    assert "ETA 0:00" in stream.getvalue().rsplit("\r", 1)[1]


@pytest.mark.parametrize(
    "args, words",
    [
        (["/nonexistent-folder", "--out", "OUT"], "/nonexistent-folder: not a folder"),
        (["EMPTY", "--out", "OUT"], "no subfolder or .zip in it"),
        (["EMPTY", "--out", "OUT", "--jobs", "0"], "--jobs 0: use at least 1"),
        (["EMPTY", "--out", "OUT", "--no-worker-timeout", "0"], "--no-worker-timeout 0: use a positive number"),
        (["EMPTY", "--out", "EMPTY"], "is the submissions folder; pass a folder of its own"),
        (["EMPTY", "--out", "OLD"], "gradebook.csv there is a folder (left by an older grader); move it away"),
    ],
)
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, args, words):
    (tmp_path / "empty").mkdir()
    args = [
        a.replace("EMPTY", str(tmp_path / "empty"))
        .replace("OUT", str(tmp_path / "out"))
        .replace("OLD", str(tmp_path / "old"))
        for a in args
    ]
    (tmp_path / "old" / "gradebook.csv").mkdir(parents=True)
    if "--jobs" in args or "--no-worker-timeout" in args or args[2] in (str(tmp_path / "empty"), str(tmp_path / "old")):
        (tmp_path / "empty" / "alice").mkdir()
    assert cli.main(["grade-batch", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "gradebook.csv").exists()


@sandboxed
def test_feedback_values_are_built_once_before_the_pool(tmp_path):
    """Two failing submissions in two pool processes, on an empty cache: the
    known bugs' values and the reference's values on the smaller inputs
    are each built once (by grade-batch before its pool), and both
    submissions get both feedback lines."""
    from catalogue import build, canonical, mutants

    subs = tmp_path / "subs"
    for name in ("broadcast_gradient_no_sum", "log_gradient_sign"):
        m = next(m for m in mutants.MUTANTS if m.name == name)
        build.write_submission(subs / name, build.apply_edits(build.reference_sources(), canonical.BASE + m.edits))
    env = {**ENV, "GRADER_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade-batch", subs, "--jobs", "2", "--out", tmp_path / "out"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )  # a hang guard only
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("known bugs of the likely-cause catalogue") == 1, proc.stderr
    assert proc.stderr.count("smaller inputs of the smallest-failing-input step") == 1, proc.stderr
    for name in ("broadcast_gradient_no_sum", "log_gradient_sign"):
        outputs = "\n".join(t["output"] for t in results(tmp_path / "out", name)["tests"])
        assert "Likely cause: " in outputs and "Smallest failing input: " in outputs, outputs


def report_config(job):
    """A grading function that only says what it was given (runs in the pool's processes)."""
    seen = {"jobs": job.config.jobs, "slots": job.config.slots and [job.config.slots.folder, job.config.slots.width]}
    seen["rank"] = job.config.slots and job.config.slots.rank
    job.out_dir.mkdir(parents=True, exist_ok=True)
    (job.out_dir / "seen.json").write_text(json.dumps(seen))
    return record_failure(job, "not graded: the test only looks at the config", time.monotonic())


def test_a_local_batch_shares_jobs_wide_question_slots_earliest_first(tmp_path):
    """Each submission may run --jobs questions at once, in --jobs slots the batch shares, ranked
    in the batch's order (the first result comes as soon as a single grade's; the cores stay busy);
    a submission alone needs no slots; the slots' folder goes with the batch."""
    subs = tmp_path / "subs"
    for name in ("carol", "alice", "bob"):
        (subs / name).mkdir(parents=True)
    batch.grade_batch(subs, tmp_path / "out", jobs=2, grade_fn=report_config, stream=io.StringIO())
    seen = {n: json.loads((tmp_path / "out" / n / "seen.json").read_text()) for n in ("alice", "bob", "carol")}
    assert [seen[n]["rank"] for n in ("alice", "bob", "carol")] == [0, 1, 2]
    assert {s["jobs"] for s in seen.values()} == {2} and {tuple(s["slots"]) for s in seen.values()} == {
        (seen["alice"]["slots"][0], 2)
    }
    assert not Path(seen["alice"]["slots"][0]).exists()
    alone = tmp_path / "alone"
    (alone / "dave").mkdir(parents=True)
    batch.grade_batch(alone, tmp_path / "out2", jobs=2, grade_fn=report_config, stream=io.StringIO())
    assert json.loads((tmp_path / "out2" / "dave" / "seen.json").read_text()) == {
        "jobs": 2,
        "slots": None,
        "rank": None,
    }


def report_parent(job):
    """A grading function that writes which process started its own (runs in the pool's processes)."""
    job.out_dir.mkdir(parents=True, exist_ok=True)
    (job.out_dir / "parent.json").write_text(json.dumps({"parent": os.getppid(), "pid": os.getpid()}))
    return record_failure(job, "not graded: the test only looks at the process", time.monotonic())


def test_the_pools_processes_are_forked_from_one_that_imported_the_grader(tmp_path):
    """Not started afresh from this process, each importing the grader again
    (0.3 s of CPU each), nor forked from it (it has threads): forked from the
    forkserver, which imported the grader once."""
    subs = tmp_path / "subs"
    for name in ("alice", "bob", "carol"):
        (subs / name).mkdir(parents=True)
    batch.grade_batch(subs, tmp_path / "out", jobs=2, grade_fn=report_parent, stream=io.StringIO())
    seen = [json.loads((tmp_path / "out" / n / "parent.json").read_text()) for n in ("alice", "bob", "carol")]
    parents = {s["parent"] for s in seen}
    assert len({s["pid"] for s in seen}) <= 2  # --jobs 2: at most two processes
    assert len(parents) == 1 and os.getpid() not in parents
    assert "grader.grading.batch.jobs" in Path(f"/proc/{parents.pop()}/cmdline").read_text().replace("\0", " ")
