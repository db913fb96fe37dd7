"""`grader handout [SRC DEST]` and `grader check-handout [SRC DEST]`
(default: the assignment's reference and handout folders).

handout: refresh the reference's copies of grader files (the manifest's
mirrors: the submit client) and of the public cases (tests/NAME/NAME_cases,
so the reference runs them too), build the student handout from the
reference into a temporary directory next to DEST, check it (no leaked
solution line, the public tests fail with NotImplementedError in the
handout and pass on the reference), then swap it in. On any error DEST is
left as it was.

check-handout: build into a temporary directory and list the files where
the committed DEST differs (content or executable bit, missing, extra), and
every copy without its generated-file label (labels.py). The reference's
copies are git-ignored build products and are not checked.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader.core import datadir, paths
from grader.core.assignment import Assignment, shown
from grader.core.files import write_atomic
from grader.handout.build import Built, HandoutError, build_tree
from grader.handout.cases import CAUSES, write_cases
from grader.core import labels
from grader.handout.checks import check_public_tests
from grader.handout.leaks import find_leaks
from grader.core.manifest import IGNORED_NAMES, mirror_paths
from grader.core.markers import MarkerError

# Local, git-ignored state of a handout a person ran `make test` in: kept
# across rebuilds and ignored when comparing.
LOCAL_STATE = (".venv", "data")

STALE = "{dest}: stale, run `make handout` and commit it; differing files:"


def build_checked(src: Path, out: Path, *, run_tests: bool, label: str, assignment: Assignment) -> Built:
    """Build into `out`; raise HandoutError on leaks or failing test checks.

    label: how messages name the handout (DEST as the user typed it).
    """
    built = build_tree(src, out, assignment=assignment)
    leaks = find_leaks(out, list(built.secrets), label=label)
    if leaks:
        raise HandoutError("\n".join(str(leak) for leak in leaks))
    if run_tests:
        problems = check_public_tests(src, assignment=assignment)
        if problems:
            raise HandoutError("\n".join(problems))
    return built


def _swap(new: Path, dest: Path):
    """Put `new` at `dest`; the old tree goes only once the new one is in place."""
    if not dest.exists():
        os.rename(new, dest)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{dest.name}-old-", dir=dest.parent)) / dest.name
    os.rename(dest, old)
    try:
        os.rename(new, dest)
    except OSError:
        os.rename(old, dest)
        raise
    for name in LOCAL_STATE:
        if (old / name).exists() and not (dest / name).exists():
            os.rename(old / name, dest / name)
    shutil.rmtree(old.parent)


def mirror_bytes(original: Path, assignment: Assignment) -> bytes:
    """What the reference's copy of a grader file holds: the original, labelled."""
    text = labels.sentence(labels.source_name(original, assignment), labels.command_of(assignment))
    return labels.label(original.name, original.read_bytes(), text)


def stale_mirrors(src: Path, assignment: Assignment) -> list[tuple[Path, Path]]:
    """(reference copy, grader original) pairs whose bytes differ."""
    return [(copy, original) for copy, original in mirror_paths(assignment.manifest, src)
            if not copy.is_file() or copy.read_bytes() != mirror_bytes(original, assignment)]


def sync_mirrors(src: Path, assignment: Assignment) -> list[Path]:
    """Refresh the reference's copies of grader files, atomically; the paths written."""
    written = []
    for copy, original in stale_mirrors(src, assignment):
        if copy.is_symlink():
            copy.unlink()  # an older layout linked it; a copy of the folder lost it
        write_atomic(copy, mirror_bytes(original, assignment))
        written.append(copy)
    return written


def _fresh_cases(scratch: Path, assignment: Assignment) -> Path:
    write_cases(scratch, assignment)
    return scratch / assignment.cases_dest


def fresh_cases(assignment: Assignment) -> dict:
    """The public cases as `make handout` writes them now (path -> FileState)."""
    with tempfile.TemporaryDirectory(prefix="cases-") as tmp:
        return snapshot(_fresh_cases(Path(tmp), assignment))


def cases_stale(src: Path, assignment: Assignment, fresh: dict | None = None) -> bool:
    """Whether the reference's copy of the public cases differs from a fresh one."""
    copy = src / assignment.cases_dest
    return not copy.is_dir() or not same_tree(snapshot(copy), fresh or fresh_cases(assignment))


def sync_cases(src: Path, assignment: Assignment) -> bool:
    """Refresh the reference's copy of the public cases (what its tests and
    notebook run, as the handout's do); True when it changed."""
    if not cases_stale(src, assignment):
        return False
    copy = src / assignment.cases_dest
    copy.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{copy.name}-", dir=copy.parent))
    try:
        _swap(_fresh_cases(scratch, assignment), copy)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return True


def reference_copies(src: Path, assignment: Assignment) -> list[str]:
    """Write the reference's git-ignored copies where missing or stale (the
    client, the public cases: what its own tests and notebook run); one
    line per copy refreshed."""
    lines = [f"{shown(path)}: refreshed from grader/shipped/{path.name}" for path in sync_mirrors(src, assignment)]
    if sync_cases(src, assignment):
        lines.append(f"{shown(src / assignment.cases_dest)}: refreshed from {shown(assignment.cases_dir)}")
    return lines


def make_handout(src: Path, dest: Path, *, run_tests: bool = True, assignment: Assignment | None = None) -> Built:
    assignment = assignment or Assignment.hw1()
    for line in reference_copies(src, assignment):
        print(line)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-build-", dir=dest.parent))
    try:
        built = build_checked(src, tmp / dest.name, run_tests=run_tests, label=dest.as_posix(),
                              assignment=assignment)
        _swap(tmp / dest.name, dest)
        return built
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass(frozen=True)
class FileState:
    data: bytes
    executable: bool


def snapshot(root: Path) -> dict[str, FileState]:
    """Every file of a handout tree, minus caches and local state."""
    files = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in LOCAL_STATE or IGNORED_NAMES.intersection(rel.parts):
            continue
        if path.is_file():
            files[rel.as_posix()] = FileState(path.read_bytes(), bool(path.stat().st_mode & 0o100))
    return files


# Expected arrays computed on another machine differ in the last bits (BLAS
# kernels differ between CPUs, and a 600-step float32 epoch carries that
# further): such a copy is not stale. Far tighter than any case's tolerance
# that matters (the full-MNIST epoch is checked at rtol 1e-3). The known
# bugs' values in causes.json are computed the same way and compared alike
# (an AMD EPYC's float32 log differs from the committer's in the last bit).
ARRAY_RTOL, ARRAY_ATOL = 1e-4, 1e-6


def _load_array(data: bytes):
    return np.load(io.BytesIO(data), allow_pickle=False)


def same_file(rel: str, a: FileState, b: FileState) -> bool:
    """Equal bytes, or for an expected value's array or the known bugs'
    values, equal within rounding."""
    if a == b:
        return True
    if a.executable != b.executable:
        return False
    if rel.split("/")[-1] == CAUSES:
        try:
            return _close(json.loads(a.data), json.loads(b.data))
        except ValueError:
            return False
    if not rel.endswith(".npy") or "expected" not in rel.split("/"):
        return False
    try:
        x, y = _load_array(a.data), _load_array(b.data)
    except (ValueError, OSError, EOFError):
        return False
    return (x.shape == y.shape and x.dtype == y.dtype and x.dtype.kind in "biuf"
            and bool(np.allclose(x, y, rtol=ARRAY_RTOL, atol=ARRAY_ATOL)))


def _close(x, y) -> bool:
    """The same JSON data, its floats equal within ARRAY_RTOL and ARRAY_ATOL."""
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(map(_close, x, y))
    if type(x) is float and type(y) in (int, float) or type(y) is float and type(x) in (int, float):
        return abs(x - y) <= ARRAY_ATOL + ARRAY_RTOL * abs(y)
    return type(x) is type(y) and x == y


def same_tree(a: dict[str, FileState], b: dict[str, FileState]) -> bool:
    return set(a) == set(b) and all(same_file(rel, a[rel], b[rel]) for rel in a)


def fresh_handout(src: Path, dest: Path, assignment: Assignment) -> dict:
    """The handout as `make handout` would write it now, its tests not run."""
    with tempfile.TemporaryDirectory(prefix="check-handout-") as tmp:
        build_checked(src, Path(tmp) / "handout", run_tests=False, label=dest.as_posix(), assignment=assignment)
        return snapshot(Path(tmp) / "handout")


def differences(src: Path, dest: Path, assignment: Assignment | None = None, fresh: dict | None = None) -> list[str]:
    """Handout paths where `dest` differs from a fresh build of `src`."""
    fresh = fresh or fresh_handout(src, dest, assignment or Assignment.hw1())
    committed = snapshot(dest) if dest.is_dir() else {}
    out = []
    for rel in sorted(set(fresh) | set(committed)):
        if rel not in committed:
            out.append(f"{rel} (missing)")
        elif rel not in fresh:
            out.append(f"{rel} (not generated: remove it)")
        elif not same_file(rel, fresh[rel], committed[rel]):
            out.append(rel)
    return out


def unlabelled(where: str, files: dict) -> list[str]:
    """`where/path (why)` for each file of a generated tree without its label."""
    return [f"{where}/{problem}" for problem in labels.unlabelled({rel: s.data for rel, s in files.items()})]


def stale(src: Path, dest: Path, assignment: Assignment) -> list[str]:
    """What check-handout reports: handout files out of date, and any file
    `make handout` would write without its label. The reference's copies
    (the client, the public cases) are build products, not committed: they
    are not checked here; `make handout` refreshes them."""
    handout = fresh_handout(src, dest, assignment)
    return differences(src, dest, assignment, handout) + unlabelled(dest.as_posix(), handout)


def _folders(args, command):
    """(assignment, SRC, DEST), or a usage error printed and None."""
    try:
        assignment = Assignment.option(args.assignment)
    except ValueError as e:
        print(f"grader {command}: {e}", file=sys.stderr)
        return None
    src = Path(args.src) if args.src else assignment.reference
    dest = Path(args.dest) if args.dest else assignment.handout
    if not src.is_dir():
        print(f"{src}: not a directory (usage: grader {command} [SRC DEST] [--assignment FOLDER])", file=sys.stderr)
        return None
    inside = [p for p in (src, dest) if Path(p).resolve().is_relative_to(paths.BUNDLED)]
    if command == "handout" and inside:  # it writes the reference's copies into SRC and the handout into DEST
        print(f"grader handout: {inside[0]} is the hw1 copy inside the installed grader, not to be written; "
              "pass --assignment FOLDER (a clone of the project)", file=sys.stderr)
        return None
    try:
        datadir.ensure(assignment)  # the public tests read it
    except ValueError as e:
        print(f"grader {command}: {e}", file=sys.stderr)
        return None
    return assignment, src, dest


def _run(args, command, work) -> int:
    """work(assignment, SRC, DEST) -> exit code, with its errors as lines naming the file."""
    folders = _folders(args, command)
    if folders is None:
        return 2
    try:
        return work(*folders)
    except OSError as e:
        print(f"{e.filename or folders[2]}: {e.strerror or e}", file=sys.stderr)
    except (HandoutError, MarkerError) as e:
        print(e, file=sys.stderr)
    return 1


def check_handout_command(args) -> int:
    """`grader check-handout`: exit 1 listing what is stale, 0 when up to date."""
    return _run(args, "check-handout", _check)


def _check(assignment, src, dest) -> int:
    found = stale(src, dest, assignment)
    if found:
        print(STALE.format(dest=dest), *found, sep="\n  ", file=sys.stderr)
        return 1
    print(f"{shown(dest)}: up to date")
    return 0


def handout_command(args) -> int:
    """`grader handout`: build, check and swap in the handout."""
    run_tests = not args.skip_tests

    def build(assignment, src, dest):
        built = make_handout(src, dest, run_tests=run_tests, assignment=assignment)
        print(f"{shown(dest)}: {len(built.files)} files, {sum(b.kind == 'solution' for _, b in built.blocks)} "
              "solution blocks stripped, no leak" + (", public tests checked" if run_tests else ""))
        return 0

    return _run(args, "handout", build)
