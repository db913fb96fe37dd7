"""`grader submit` and `grader publish`: run the student client, `grader/shipped/mugrade.py`,
on a project folder (the current one, or the assignment's reference for publish).

publish takes the assignment's name, or a folder with an assignment.toml:
then its name, its registry's points and its reference folder are used.

The client runs in a subprocess with the folder as working directory, as the
course runs it: the test files find `python/` and `apps/` relative to it, and
whatever needle they import never enters this process. The key travels in
the environment, not on the command line, so `ps` does not show it.
"""

import os
import subprocess
import sys
from pathlib import Path

from grader.core.assignment import Assignment, AssignmentError
from grader.core.blas import one_thread_env
from grader.core.paths import ROOT
from grader.handout.commands import reference_copies

RUN_TIMEOUT = 3600  # seconds: generous, a full run computes a few MNIST epochs at most


def submit_command(args) -> int:
    return _run_client(args, "submit")


def publish_command(args) -> int:
    return _run_client(args, "publish")


def _assignment(args):
    """(name, Assignment or None): what --assignment names (Assignment.option),
    else a name only the server knows (the reference then comes from --dir)."""
    try:
        assignment = Assignment.option(args.assignment)
    except AssignmentError:
        if Path(args.assignment).is_dir():  # a folder that is not a good assignment: say why
            raise
        return args.assignment, None
    return assignment.name, assignment


def _run_client(args, command) -> int:
    try:
        name, assignment = _assignment(args)
    except AssignmentError as e:
        print(f"grader {command}: {e}", file=sys.stderr)
        return 2
    if args.dir is None:  # publish: the assignment's reference
        args.dir = str(assignment.reference) if assignment else "reference"
    args.tests = args.tests or f"tests/{name}"
    folder = Path(args.dir)
    if not (folder / args.tests).exists():
        print(
            f"grader {command}: {folder / args.tests} not found; run from the project folder or pass --dir",
            file=sys.stderr,
        )
        return 2
    if not args.key:
        print(f"grader {command}: give a key (--key KEY or $MUGRADE_KEY)", file=sys.stderr)
        return 2
    if not args.server:
        print(f"grader {command}: give the server URL (--server URL or $MUGRADE_SERVER)", file=sys.stderr)
        return 2
    if not args.server.startswith(("http://", "https://")):
        print(
            f"grader {command}: --server {args.server!r}: give a URL starting with http:// or https://, "
            f"e.g. http://{args.server}/",
            file=sys.stderr,
        )
        return 2
    if assignment is not None and (folder / args.tests).exists():
        # the folder's copies of the client and the public cases (git-ignored in
        # the reference): written now where missing or stale
        for line in reference_copies(folder, assignment):
            print(line, file=sys.stderr)
    # publish also describes each case to the server (grader/client/publish_notes.py)
    module = "grader.client.publish_notes" if command == "publish" else "grader.shipped.mugrade"
    cmd = [
        sys.executable,
        "-m",
        module,
        command,
        "--assignment",
        name,
        "--server",
        args.server,
        "--tests",
        args.tests,
    ] + (["-k", args.select] if args.select else [])
    if command == "publish":
        cmd += _publish_flags(args, assignment)
    try:
        return subprocess.run(cmd, cwd=folder, env=_env(args.key), timeout=RUN_TIMEOUT).returncode
    except subprocess.TimeoutExpired:
        print(f"grader {command}: the cases did not finish within {RUN_TIMEOUT} s", file=sys.stderr)
        return 1


def _publish_flags(args, assignment) -> list:
    flags = []
    if assignment is not None:
        # the registry's points, published as weights so the gradebook total is out of the assignment's
        questions = assignment.registry().questions
        flags += ["--points", ",".join(f"{q.key}={q.points}" for q in questions)]
    for name in ("deadline", "rtol", "atol"):
        if getattr(args, name) is not None:
            flags += [f"--{name}", str(getattr(args, name))]
    return flags


def _env(key: str) -> dict:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return one_thread_env(MUGRADE_KEY=key, PYTHONPATH=path)
