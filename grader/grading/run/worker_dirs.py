"""The two folders a sandboxed worker is given: the library copy it runs in
(the pristine handout with the student files overlaid) and the runner
beside it (the worker script, where.py, the cases package with its
bytecode, the drawn inputs, the student files' given functions)."""

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

from grader.core import markers
from grader.core.assignment import Assignment
from grader.core.files import write_atomic
from grader.core.paths import SHIPPED
from grader.grading.run import cache
from grader.sandbox.files import compiled, copy_regular
from grader.shipped.cases.util import HANDED_FILE

WORKER = SHIPPED / "worker.py"
WHERE = SHIPPED / "where.py"  # the worker's `where:` (also shipped in the handout)
CASES_PACKAGE = "assignment_cases"  # what the worker imports the runner's copy of the cases as
COMPLETE = ".complete"  # the marker of a built compiled_code folder
STUDENT_CODE = "student_code.json"  # beside the worker: student files and their given functions (where:)


def build_copy(base: Path, files: dict, dest: Path) -> Path:
    """The library copy a worker runs in: the top folders of `base` that hold
    the student files (hw1: python/ and apps/), with `files` (handout-relative
    path -> source) overlaid. The sandbox copies it again, regular files only,
    for each run, and adds data/."""
    folders = list(dict.fromkeys(Path(rel).parts[0] for rel in files))
    for sub in folders:
        if not (base / sub).is_dir():
            raise FileNotFoundError(
                f"{base / sub}: missing; the grader builds each submission's copy "
                f"from the pristine handout: run `make handout`"
            )
    for sub in folders:
        shutil.copytree(base / sub, dest / sub, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for rel, src in files.items():
        _copy_nofollow(Path(src), dest / rel)
    return dest


def _copy_nofollow(src: Path, dest: Path) -> None:
    """Copy a student file only if it is still a plain file (not a link swapped in since it was checked)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{src}: not a regular file")
        dest.write_bytes(f.read())


def student_code(assignment: Assignment) -> dict:
    """What the worker's `where:` needs to find the student's line: the
    student files and, in each, the reference's functions that hold no
    student code (given code, which a `where:` skips over). Parsing them
    takes a tenth of a second, on every grade's critical path: kept in the
    private cache, keyed by the texts and the parser."""
    texts = {}
    for rel in assignment.student_files:
        path = assignment.reference / rel
        texts[rel] = path.read_text(encoding="utf-8") if path.is_file() else ""
    digest = hashlib.sha256(Path(markers.__file__).read_bytes() + json.dumps(texts, sort_keys=True).encode())
    kept = cache.private_root() / f"student-code-{digest.hexdigest()[:16]}.json"
    try:
        return json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    found = {
        "files": {rel: {"given": markers.given_functions(text, rel) if text else []} for rel, text in texts.items()}
    }
    write_atomic(kept, json.dumps(found, sort_keys=True))
    return found


def build_runner(dest: Path, assignment: Assignment, inputs: Path | None = None) -> Path:
    """The worker's folder: the worker, where.py, the cases package and,
    for drawn inputs, their arrays (never the seed they come from)."""
    copy_regular(compiled_code(assignment), dest, skip={COMPLETE}, bytecode=True)
    if inputs is not None:
        shutil.copyfile(inputs, dest / HANDED_FILE)
    (dest / STUDENT_CODE).write_text(json.dumps(student_code(assignment), sort_keys=True), encoding="utf-8")
    return dest


def compiled_code(assignment: Assignment) -> Path:
    """The runner's code (the worker, where.py, the cases package) with its
    bytecode, compiled by hash once per change of any of it: each worker
    would compile the cases package again, and compiling it for every
    grading took the parent 15-50 ms before its first worker could start.
    A cache folder of no secret: the cases are what the handout ships."""
    cases = sorted(
        p
        for p in assignment.cases_dir.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    digest = hashlib.sha256()
    for path in (WORKER, WHERE, *cases):
        digest.update(str(path.relative_to(path.parents[1])).encode() + b"\0" + path.read_bytes() + b"\0")

    def build(folder: Path) -> None:
        shutil.copyfile(WORKER, folder / "worker_boot.py")
        shutil.copyfile(WHERE, folder / "where.py")
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(assignment.cases_dir, folder / CASES_PACKAGE, ignore=ignore)
        compiled(folder, by_hash=True)
        (folder / COMPLETE).write_text("")

    return cache.built_once(cache.cache_root() / f"runner-code-{digest.hexdigest()[:16]}", COMPLETE, build, "", "")
