"""What graded a result: every results.json says which grader, case table,
reference, student files, drawn inputs and environment produced its score,
so that the score can be reproduced or defended later, and `grader regrade`
can tell which results still stand (grader/grading/batch/regrade.py).

The seed itself never appears: only `seed_id`, a hash (seeds.py).
A git submission's commit is read from its .git folder's files: student
repositories are hostile, so no git command (and no hook) ever runs on one.
It is recorded as fact only when the submission's own git objects hold it
and the files graded (git_objects.py); otherwise as `claimed:<commit>`.
"""

import dataclasses
import datetime as dt
import hashlib
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

from grader import ROOT
from grader.grading.run.expected import case_sources, reference_sources
from grader.grading.run.git_objects import check_commit
from grader.grading.run.submission import SubmissionError, locate

GRADED, REFUSED, GRADER_ERROR = "graded", "refused", "grader error"
# The fields a result must share with the current inputs to stand as it is
# (time and tier say how it was graded, not what decides the score).
INPUTS = (
    "grader_version",
    "cases_sha256",
    "reference_sha256",
    "submission_sha256",
    "seed_id",
    "numpy",
    "sandbox_packages",
    "python",
    "scoring",
)
# Why a result is graded again, by the input that differs.
WHY = {
    "submission_sha256": "submission changed",
    "cases_sha256": "cases changed",
    "reference_sha256": "reference changed",
    "sandbox_packages": "packages changed",
}
GRADER_CHANGED = "grader changed"
HEX40 = re.compile(r"^[0-9a-f]{40}$")
MAX_GIT_FILE = 1 << 20
CLAIMED = "claimed:"  # a commit the submission's .git names but its objects do not bear out


@dataclass(frozen=True)
class Provenance:
    grader_version: str  # the package version, and the grader's git commit when known
    cases_sha256: str  # the cases package: case table and code
    reference_sha256: str  # the reference's sources (the expected answers)
    submission_sha256: str  # the student files graded ("" when none could be read)
    seed_id: str  # which drawn inputs (a hash of the seed, never the seed)
    numpy: str  # the grader's numpy (it compares the values)
    sandbox_packages: tuple  # what student code and the reference ran against
    python: str
    tier: str  # the sandbox tier
    time: str  # when, UTC ISO 8601
    scoring: str = "contract"
    status: str = GRADED  # graded, refused (the submission could not be read), grader error
    git_commit: str = ""  # a git submission's HEAD commit, verified; "claimed:<commit>" when not (checked_commit)
    inputs: str = ""  # how the scored inputs were derived (inputs.derivation: never the secret)
    packages_from: str = "assignment.toml"  # who chose sandbox_packages: the declaration, or --packages

    def to_json(self) -> dict:
        doc = dataclasses.asdict(self)
        doc["sandbox_packages"] = list(self.sandbox_packages)
        return doc


def _sha256(paths, base_of) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(base_of(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def cases_sha256(assignment) -> str:
    return _sha256(case_sources(assignment), lambda p: _shown(p, assignment.cases_dir))


def reference_sha256(assignment) -> str:
    return _sha256(reference_sources(assignment), lambda p: _shown(p, assignment.reference))


def submission_sha256(files: dict, student_files) -> str:
    """The student files graded (handout-relative path -> Path), in the
    assignment's order; a file not submitted counts as missing."""
    digest = hashlib.sha256()
    for rel in sorted(student_files):
        path = files.get(rel)
        digest.update(rel.encode() + b"\0" + (b"present\0" + Path(path).read_bytes() if path else b"missing"))
        digest.update(b"\0")
    return digest.hexdigest()


def raw_sha256(submission: Path) -> str:
    """A submission that could not be read: the bytes of its file (a zip), "" for a folder."""
    try:
        return hashlib.sha256(Path(submission).read_bytes()).hexdigest() if Path(submission).is_file() else ""
    except OSError:
        return ""


def sandbox_packages(assignment) -> tuple:
    return tuple(assignment.packages) or (f"numpy=={np.__version__} (the grader's own)",)


@lru_cache(maxsize=1)
def grader_version() -> str:
    """ "0.1.0+g<commit>" from a git checkout of the grader, else the version alone."""
    try:
        version = metadata.version("needle-grader")
    except metadata.PackageNotFoundError:
        version = "unknown"
    try:  # our own checkout (trusted), hooks off all the same
        out = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        commit = out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version}+g{commit[:12]}" if HEX40.match(commit) else version


def _read_small(path: Path) -> str:
    """A regular file's text, never through a link, at most MAX_GIT_FILE bytes; "" otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return ""
        return f.read(MAX_GIT_FILE).decode("utf-8", "replace")


def git_commit(submission: Path) -> str:
    """HEAD's commit of a folder submission with a .git folder, read from
    .git/HEAD, its ref file or packed-refs; "" when there is none or it
    cannot be read safely (links, odd files, a .git file pointing elsewhere)."""
    git = Path(submission) / ".git"
    try:
        if not stat.S_ISDIR(os.lstat(git).st_mode):
            return ""
    except OSError:
        return ""
    head = _read_small(git / "HEAD").strip()
    if HEX40.match(head):  # a detached HEAD
        return head
    ref = head[len("ref: ") :].strip() if head.startswith("ref: ") else ""
    if not re.fullmatch(r"refs/[A-Za-z0-9._/-]{1,200}", ref) or ".." in ref.split("/"):
        return ""
    direct = _read_small(git.joinpath(*ref.split("/"))).strip()
    if HEX40.match(direct):
        return direct
    for line in _read_small(git / "packed-refs").splitlines():
        commit, _, name = line.partition(" ")
        if name.strip() == ref and HEX40.match(commit):
            return commit
    return ""


def checked_commit(submission: Path, student_files) -> str:
    """The git_commit recorded: HEAD's commit when the submission's own git
    objects hold it, its tree and the student files graded byte for byte
    (git_objects.py); `claimed:<commit>` when they do not (a .git holding
    only HEAD and a ref names any commit it likes); "" without one."""
    commit = git_commit(submission)
    if not commit:
        return ""
    root = Path(submission).resolve()
    try:
        located = locate(root, student_files).files
        graded = {path.resolve().relative_to(root).as_posix(): path.read_bytes() for path in located.values()}
    except (SubmissionError, OSError, ValueError):
        return CLAIMED + commit
    if not graded or check_commit(root / ".git", commit, graded):
        return CLAIMED + commit
    return commit


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def make(
    assignment,
    submission: Path,
    digest: str,
    seed_id: str,
    tier: str,
    scoring: str,
    status: str = GRADED,
    inputs: str = "",
) -> Provenance:
    """The provenance of a result graded now."""
    commit = checked_commit(submission, assignment.student_files) if Path(submission).is_dir() else ""
    return Provenance(
        grader_version(),
        cases_sha256(assignment),
        reference_sha256(assignment),
        digest,
        seed_id,
        np.__version__,
        sandbox_packages(assignment),
        sys.version.split()[0],
        tier,
        now_iso(),
        scoring,
        status,
        commit,
        inputs,
        assignment.packages_from,
    )


def inputs(doc: dict) -> dict:
    """The INPUTS a parsed results.json records ({} for a result without provenance)."""
    extra = doc.get("extra_data") if isinstance(doc, dict) else None
    found = extra.get("provenance") if isinstance(extra, dict) else None
    if not isinstance(found, dict) or "submission_sha256" not in found:
        return {}
    out = {k: found.get(k) for k in INPUTS}
    out["sandbox_packages"] = list(out["sandbox_packages"] or [])
    out["scoring"] = found.get("scoring", extra.get("scoring"))
    out["status"] = found.get("status", GRADED)
    return out


def current_inputs(prov: Provenance) -> dict:
    doc = prov.to_json()
    return {**{k: doc[k] for k in INPUTS}, "status": prov.status}


def why_changed(old: dict, new: dict) -> tuple:
    """Why a result with inputs `old` is graded again under `new` (() when it stands)."""
    if not old:
        return ("graded by an older grader (no provenance)",)
    if old.get("status") == GRADER_ERROR:
        return ("the grader failed on it before",)
    reasons = [why for field, why in WHY.items() if old.get(field) != new.get(field)]
    if any(old.get(k) != new.get(k) for k in INPUTS if k not in WHY):
        reasons.append(GRADER_CHANGED)
    return tuple(reasons)
