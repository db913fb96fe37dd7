"""`grader regrade` on the toy assignment (tests/fixtures/toy.py): a batch is
graded, one submission is replaced and one case's expected value changes
(the toy reference's answer to `square`); the dry run lists exactly the
students whose score moves, with the reasons, and changes nothing;
`--apply` puts the new results and gradebook in place, keeps the old
results beside them and logs it; a second dry run lists nothing. Every
results.json says what graded it; the gradebook carries each submission's
hash and a git submission's commit."""

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "fixtures"))
sys.path.insert(0, str(HERE / "fixtures" / "server"))
from server_harness import child_env  # noqa: E402
from toy import student_copy, write_toy  # noqa: E402

pytestmark = [pytest.mark.sandbox]

SQUARE = "return np.asarray(x, dtype=np.float64) ** 2\n"
PROVENANCE = {
    "grader_version",
    "cases_sha256",
    "reference_sha256",
    "submission_sha256",
    "seed_id",
    "numpy",
    "sandbox_packages",
    "python",
    "tier",
    "time",
    "scoring",
    "status",
    "git_commit",
    "inputs",
    "packages_from",
}


def grader(tmp, *args):
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        cwd=tmp,
        env=child_env(GRADER_CACHE=str(tmp / "cache"), USER="prof"),
        capture_output=True,
        text=True,
        timeout=600,
    )


def book(out: Path) -> dict:
    return {row["submission"]: row for row in csv.DictReader((out / "gradebook.csv").read_text().splitlines())}


def regrade_rows(out: Path) -> list:
    return list(csv.reader((out / "regrade.csv").read_text().splitlines()))


def results(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text())


def git_commit_all(folder: Path) -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "core.hooksPath=/dev/null"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "hw"]):
        subprocess.run([*git, *args], cwd=folder, check=True, capture_output=True)
    return subprocess.run(
        [*git, "rev-parse", "HEAD"], cwd=folder, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("regrade")
    toy = write_toy(tmp / "toy")
    r = grader(tmp, "handout", "--assignment", toy)
    assert r.returncode == 0, r.stdout + r.stderr
    subs = tmp / "subs"
    student_copy(toy, subs / "alice")
    student_copy(toy, subs / "bob", double="3 * np.asarray(x, dtype=np.float64)")
    student_copy(toy, subs / "carol", square="np.asarray(x, dtype=np.float64) ** 2 + 1")
    student_copy(toy, subs / "dave", square="np.asarray(x, dtype=np.float64) ** 3")
    commit = git_commit_all(subs / "dave")
    out = tmp / "out"
    r = grader(tmp, "grade-batch", subs, "--out", out, "--jobs", "2", "--assignment", toy)
    assert r.returncode == 0, r.stderr
    return tmp, toy, subs, out, commit


def test_results_say_what_graded_them_and_the_gradebook_has_hash_and_commit(graded):
    tmp, toy, subs, out, commit = graded
    doc = results(out, "alice")
    found = doc["extra_data"]["provenance"]
    assert set(found) == PROVENANCE
    assert (
        found["status"] == "graded"
        and found["time"].endswith("Z")
        and found["tier"] == doc["extra_data"]["sandbox_tier"]
    )
    declared = re.search(
        r'^version = "([^"]+)"', (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(), re.M
    ).group(1)
    assert found["grader_version"].startswith(declared)  # the package's version (pyproject.toml), then +g<commit>
    assert all(len(found[k]) == 64 for k in ("cases_sha256", "reference_sha256", "submission_sha256"))
    assert not (out / ".grading-seed").exists()  # the course secret, kept in the grader's private cache only
    seed = (tmp / "cache" / "seed").read_text().strip()
    assert seed not in (out / "alice" / "results.json").read_text()  # the id only, never the seed
    rows = book(out)
    assert {n: r["total"] for n, r in rows.items()} == {"alice": "100", "bob": "60", "carol": "40", "dave": "40"}
    assert rows["dave"]["commit"] == commit and rows["alice"]["commit"] == ""
    assert rows["alice"]["submission_sha256"] == found["submission_sha256"]
    assert rows["alice"]["submission_sha256"] != rows["bob"]["submission_sha256"]
    record = json.loads((out / "batch.json").read_text())
    assert record["submissions"] == str(subs.resolve()) and record["assignment"] == str(toy)


def test_dry_run_lists_who_moves_and_why_then_apply_then_nothing(graded):
    tmp, toy, subs, out, _ = graded
    student_copy(toy, subs / "bob", double="2 * np.asarray(x, dtype=np.float64)")  # bob resubmits
    ops = toy / "reference/python/toy/ops.py"
    ops.write_text(ops.read_text().replace(SQUARE, SQUARE.replace("** 2", "** 2 + 1")))  # the answer changes
    before = {n: (out / n / "results.json").read_bytes() for n in ("alice", "bob", "carol", "dave")}
    gradebook = (out / "gradebook.csv").read_bytes()

    r = grader(tmp, "regrade", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    expected = [
        ["submission", "old total", "new total", "cases changed", "why"],
        ["alice", "100", "40", "square_range: passed -> failed", "reference changed"],
        [
            "bob",
            "60",
            "40",
            "double_range: failed -> passed; square_range: passed -> failed",
            "submission changed; reference changed",
        ],
        ["carol", "40", "100", "square_range: failed -> passed", "reference changed"],
    ]
    assert regrade_rows(out) == expected  # dave: graded again, same score: not listed
    assert "4 graded again (inputs changed), 0 unchanged" in r.stdout and "3 score(s) or verdicts change" in r.stdout
    assert "dry run" in r.stdout
    assert {n: (out / n / "results.json").read_bytes() for n in before} == before  # nothing changed
    assert (out / "gradebook.csv").read_bytes() == gradebook and not (out / "audit.log").exists()
    assert [p.name for p in out.glob(".regrade-*")] == [".regrade-staged"]  # the dry run's results, kept
    staged = {n: (out / ".regrade-staged" / n / "results.json").read_bytes() for n in before}
    assert book(out).keys() == before.keys()  # (a hidden folder is never a gradebook row)

    student_copy(toy, subs / "dave", square="np.asarray(x, dtype=np.float64) ** 2 + 1")  # after the dry run
    expected[1:] = sorted(
        expected[1:]
        + [["dave", "40", "100", "square_range: failed -> passed", "submission changed; reference changed"]]
    )
    r = grader(tmp, "regrade", out, "--apply", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "3 taken from the dry run as it graded them, 1 graded now" in r.stdout
    for name in ("alice", "bob", "carol"):  # applied as the dry run graded them, not graded again
        assert (out / name / "results.json").read_bytes() == staged[name]
    assert (out / "dave" / "results.json").read_bytes() != staged["dave"]  # changed since: graded now
    assert not list(out.glob(".regrade-*"))  # nothing staged left behind
    assert regrade_rows(out) == expected
    assert {n: r["total"] for n, r in book(out).items()} == {"alice": "40", "bob": "40", "carol": "100", "dave": "100"}
    assert results(out, "alice")["score"] == 40
    kept = list((out / "alice").glob("results.prev-*.json"))
    assert len(kept) == 1 and kept[0].read_bytes() == before["alice"]
    assert len(list((out / "dave").glob("results.prev-*.json"))) == 1  # re-stamped with its new provenance
    log = (out / "audit.log").read_text().splitlines()
    assert len(log) == 5 and "\tprof\tregrade --apply" in log[0] and "4 result(s) replaced" in log[0]
    assert any(line.split("\t")[2:5] == ["alice", "100 -> 40", "reference changed"] for line in log)

    r = grader(tmp, "regrade", out)
    assert r.returncode == 0, r.stderr
    assert regrade_rows(out) == expected[:1]
    assert "0 graded again (inputs changed), 4 unchanged (result reused)" in r.stdout


def test_regrade_without_a_batch_record_says_how_to_make_one(graded, tmp_path):
    tmp = graded[0]
    r = grader(tmp, "regrade", tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().startswith(f"grader regrade: {tmp_path}/batch.json: missing")
    assert "grade-batch DIR --out" in r.stderr
