"""A submission's git commit is recorded as fact only when its own git
objects bear it out (the commit, its tree, the graded files' blobs), read
in Python from loose objects and packs (OFS and REF deltas), never by
running git on the student's repository; otherwise it is
`claimed:<commit>`, in results and in gradebook.csv.

The repositories here are made by git itself (our own, in tmp folders):
loose, packed by `git gc`, repacked with REF deltas; then forged ones."""

import os
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from grader import REFERENCE
from grader.core.assignment import Assignment
from grader.grading.batch import book as batch_book
from grader.grading.report import provenance
from grader.grading.run.git_objects import GitObjectError, ObjectStore, apply_delta, check_commit, object_id
from grader.shipped.cases import QUESTIONS

FILES = Assignment.hw1().student_files
GIT = [
    "git",
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.org",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "gc.auto=0",
]
GOLDEN = Path(__file__).parents[1] / "golden" / "batch" / "gradebook-commits.csv"


def git(repo: Path, *args) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def write_files(repo: Path, edit: str = "") -> None:
    for rel in FILES:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((REFERENCE / rel).read_text() + edit)


def graded(repo: Path) -> dict:
    return {rel: (repo / rel).read_bytes() for rel in FILES}


@pytest.fixture
def repo(tmp_path) -> Path:
    """Three commits, each appending a line to every file (so packs hold deltas)."""
    repo = tmp_path / "sub"
    repo.mkdir()
    git(repo, "init", "-q")
    for i in range(3):
        write_files(repo, "".join(f"\n# revision {j}\n" for j in range(i)))
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"hw {i}")
    return repo


def all_objects(repo: Path) -> dict:
    """name -> (kind, content) of every object, as git itself prints them."""
    names = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)").splitlines()
    out = {}
    for line in names:
        name, kind = line.split()
        content = subprocess.run([*GIT, "cat-file", kind, name], cwd=repo, check=True, capture_output=True).stdout
        out[name] = (kind.encode(), content)
    return out


def loose_count(repo: Path) -> int:
    return sum(1 for p in (repo / ".git" / "objects").glob("??/*"))


def test_a_loose_repository_s_commit_is_verified(repo):
    head = git(repo, "rev-parse", "HEAD")
    assert loose_count(repo) > 0 and not list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    assert provenance.checked_commit(repo, FILES) == head


@pytest.mark.parametrize(
    "repack",
    [["gc", "-q", "--aggressive"], ["-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"]],
    ids=["gc OFS deltas", "repack REF deltas"],
)
def test_packed_objects_read_like_git_s_own_deltas_included(repo, repack):
    head, first = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD~2")
    old = {rel: (REFERENCE / rel).read_bytes() for rel in FILES}
    git(repo, *repack)
    git(repo, "prune-packed")
    assert loose_count(repo) == 0
    verify = subprocess.run(
        [*GIT, "verify-pack", "-v", *map(str, (repo / ".git/objects/pack").glob("*.idx"))],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "chain length = " in verify, "the pack holds deltas: the test reads them"
    store = ObjectStore(repo / ".git")
    expected = all_objects(repo)
    assert {name: store.read(name) for name in expected} == expected
    assert provenance.checked_commit(repo, FILES) == head
    assert check_commit(repo / ".git", first, old) == ""  # an older commit: its blobs are deltas
    assert check_commit(repo / ".git", first, graded(repo)).startswith("the graded ")


def test_a_file_changed_after_the_commit_makes_it_claimed(repo):
    head = git(repo, "rev-parse", "HEAD")
    with open(repo / "apps" / "simple_ml.py", "a") as f:
        f.write("\n# not committed\n")
    assert provenance.checked_commit(repo, FILES) == f"claimed:{head}"
    assert check_commit(repo / ".git", head, graded(repo)) == "the graded apps/simple_ml.py is not the commit's"


def forged(tmp_path: Path, commit: str) -> Path:
    """The red team's submission: a handout-shaped folder and a .git with only HEAD and packed-refs."""
    sub = tmp_path / "forged"
    write_files(sub)
    (sub / ".git").mkdir()
    (sub / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (sub / ".git" / "packed-refs").write_text(f"# pack-refs with: peeled\n{commit} refs/heads/main\n")
    return sub


def test_a_forged_git_with_only_head_and_packed_refs_is_claimed(tmp_path, repo):
    commit = git(repo, "rev-parse", "HEAD")  # a real commit, of a real solution: only not in this folder
    sub = forged(tmp_path, commit)
    assert provenance.git_commit(sub) == commit  # what the files claim
    assert provenance.checked_commit(sub, FILES) == f"claimed:{commit}"
    assert check_commit(sub / ".git", commit, graded(sub)) == f"object {commit} is not in the repository"


def test_objects_reached_through_alternates_or_links_do_not_count(tmp_path, repo):
    commit = git(repo, "rev-parse", "HEAD")
    sub = forged(tmp_path, commit)
    (sub / ".git" / "objects" / "info").mkdir(parents=True)
    (sub / ".git" / "objects" / "info" / "alternates").write_text(str(repo / ".git" / "objects") + "\n")
    assert provenance.checked_commit(sub, FILES) == f"claimed:{commit}"
    shutil.rmtree(sub / ".git" / "objects")
    (sub / ".git" / "objects").symlink_to(repo / ".git" / "objects")
    assert provenance.checked_commit(sub, FILES) == f"claimed:{commit}"
    (sub / ".git" / "objects").unlink()
    (sub / ".git" / "objects").mkdir()
    (sub / ".git" / "objects" / commit[:2]).symlink_to(repo / ".git" / "objects" / commit[:2])
    assert provenance.checked_commit(sub, FILES) == f"claimed:{commit}"


def test_an_object_that_does_not_hash_to_its_name_is_forged(tmp_path, repo):
    commit = git(repo, "rev-parse", "HEAD")
    path = repo / ".git" / "objects" / commit[:2] / commit[2:]
    kind, content = ObjectStore(repo / ".git").read(commit)
    fake = content.replace(b"hw 2", b"hw 9")
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"commit %d\0" % len(fake) + fake))
    with pytest.raises(GitObjectError, match="does not hash to its name"):
        ObjectStore(repo / ".git").read(commit)
    assert provenance.checked_commit(repo, FILES) == f"claimed:{commit}"
    path.write_bytes(b"not zlib at all")
    assert check_commit(repo / ".git", commit, graded(repo)).startswith("not a zlib stream")


def test_no_git_and_a_zip_record_no_commit(tmp_path):
    write_files(tmp_path / "plain")
    assert provenance.checked_commit(tmp_path / "plain", FILES) == ""


def test_deltas_copy_and_insert_and_refuse_a_wrong_base():
    base = b"0123456789abcdef"
    # sizes 16 -> 9; copy offset 2 length 4, insert "XYZ", copy offset 14 length 2
    delta = bytes([16, 9, 0x80 | 0x01 | 0x10, 2, 4, 3]) + b"XYZ" + bytes([0x80 | 0x01 | 0x10, 14, 2])
    assert apply_delta(base, delta) == b"2345XYZef"
    with pytest.raises(GitObjectError, match="another base"):
        apply_delta(base + b"!", delta)
    with pytest.raises(GitObjectError, match="past its base"):
        apply_delta(base, bytes([16, 40, 0x80 | 0x01 | 0x10, 2, 40]))
    assert object_id(b"blob", b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob


def test_the_gradebook_shows_a_claimed_commit_as_claimed():
    """Regenerate after an intended change with UPDATE_GOLDEN=1, then review the diff."""

    def result(commit):
        return {
            "score": 100,
            "tests": [{"name": "a"}],
            "extra_data": {"questions": {}, "provenance": {"submission_sha256": "ab" * 32, "git_commit": commit}},
        }

    rows = {
        "verified": batch_book.row_from_results("verified", result("c0ffee" + "0" * 34), QUESTIONS),
        "forged": batch_book.row_from_results("forged", result("claimed:" + "d" * 40), QUESTIONS),
        "plain": batch_book.row_from_results("plain", result(""), QUESTIONS),
    }
    text = batch_book.render(rows, QUESTIONS)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), f"{GOLDEN}: run UPDATE_GOLDEN=1 and review the diff"
    assert ",claimed:dddd" in text.splitlines()[1] and text.splitlines()[3].endswith(",c0ffee" + "0" * 34)


def test_results_record_the_forged_commit_as_claimed_and_the_real_one_as_is(tmp_path, repo):
    commit = git(repo, "rev-parse", "HEAD")
    assignment = Assignment.hw1()
    made = provenance.make(assignment, forged(tmp_path, commit), "00" * 32, "seed-id", "none", "contract")
    assert made.to_json()["git_commit"] == f"claimed:{commit}"
    assert provenance.make(assignment, repo, "00" * 32, "seed-id", "none", "contract").git_commit == commit


def test_objects_past_the_inflating_budget_are_refused_not_followed(repo, monkeypatch):
    from grader.grading.run import git_objects

    git(repo, "gc", "-q", "--aggressive")
    git(repo, "prune-packed")
    head = git(repo, "rev-parse", "HEAD")
    # the check reads the commit and the trees on the files' paths (a few hundred bytes), never the blobs:
    # the trees name them by hash, and the graded bytes must hash to those names
    monkeypatch.setattr(git_objects, "MAX_TOTAL", 1000)
    assert check_commit(repo / ".git", head, graded(repo)) == ""
    monkeypatch.setattr(git_objects, "MAX_TOTAL", 200)
    assert check_commit(repo / ".git", head, graded(repo)).startswith("the objects inflate past 200 bytes")
    assert provenance.checked_commit(repo, FILES) == f"claimed:{head}"
