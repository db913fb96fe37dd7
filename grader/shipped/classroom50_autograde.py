"""Classroom 50's autograder for hw1's public cases (the `autograder.py`
that `grader classroom50 OUTDIR` writes runs this).

Classroom 50's runner runs `python autograder.py` in the student's checkout
with its environment (CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, OWNER,
COMMIT_URL, RELEASE_URL, REVIEW_URL, GITHUB_*). This grades the public cases
exactly as the student's `make test` does, in a fresh copy of the handout
(shipped beside autograder.py, so edited tests, points or conftest in the
repository change nothing) with only the student files taken from the
checkout:

1. `make setup data` (a .venv with the graded versions, or $PYTHON; MNIST
   from $MNIST_DIR or downloaded and checked);
2. `make test RESULTS=FILE` between `::stop-commands::` markers and without
   the runner's GITHUB_* files, so student output is shown, never obeyed;
3. annotations on the student's lines (github_ci.py, as the GitHub
   workflow prints them), then ./result.json and ./release-body.md
   (classroom50_result.py), which the runner publishes as the submission's
   Release and mirrors to the run's Summary.

The runner is no isolation boundary: these points are feedback, the grade
that counts comes from the instructor's grader (docs: instructor/ci/classroom50.md).

Exit status: 0 whenever the cases ran, whatever they scored (a file that
does not import, a crash or a timeout score 0 and say why); 1 when the
cases could not be set up (the runner then records an error); 2 when the
runner's variables are missing (nothing written). Standard library only.
"""

import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from . import classroom50_result, github_ci

BUNDLE = Path(__file__).resolve().parent.parent  # the folder holding autograder.py
CONFIG = "bundle.json"  # written by `grader classroom50`: files, paths and limits
RESULT, BODY = "result.json", "release-body.md"
RUNNER_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")
SETUP_TIMEOUT = 900  # seconds for `make setup data` (pip and the MNIST download)
TAIL = 3000  # characters of a failed setup's output shown in the log


class BundleDamaged(RuntimeError):
    """The autograder folder lacks a file it was built with; rebuild it."""


def load_config(bundle: Path = BUNDLE) -> dict:
    try:
        config = json.loads((bundle / CONFIG).read_text(encoding="utf-8"))
        handout = bundle / config["handout"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BundleDamaged(f"{bundle / CONFIG}: unreadable ({exc}); rebuild with `grader classroom50 OUTDIR`")
    if not handout.is_dir():
        raise BundleDamaged(f"{handout}: missing; rebuild with `grader classroom50 OUTDIR`")
    return config


def stage(checkout: Path, work: Path, config: dict, bundle: Path = BUNDLE) -> list:
    """A fresh handout copy at `work` holding the checkout's student files;
    returns a note for each student file the checkout lacks."""
    shutil.copytree(bundle / config["handout"], work, symlinks=False)
    notes = []
    for rel in config["student_files"]:
        source = checkout / rel
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, work / rel)
        else:
            notes.append(f"{rel}: not a file in your repository, so the handout's stub was graded.")
    return notes


def case_env(env) -> dict:
    """The runner's environment without its GITHUB_* files: code under test
    cannot write the step's outputs, summary, environment or path."""
    return {k: v for k, v in env.items() if k not in RUNNER_FILES}


def set_up(work: Path, env, out) -> bool:
    """`make setup data`; on failure its output's tail and one error line."""
    try:
        proc = subprocess.run(
            ["make", "--no-print-directory", "setup", "data"],
            cwd=work,
            env=case_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=SETUP_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(github_ci.command("error", f"make setup data could not run: {exc}", title="not graded"), file=out)
        return False
    if proc.returncode == 0:
        return True
    with github_ci.commands_stopped(out):
        print(proc.stdout[-TAIL:], file=out, flush=True)
    print(
        github_ci.command(
            "error",
            f"make setup data failed (exit {proc.returncode}); the public cases did not run",
            title="not graded",
        ),
        file=out,
    )
    return False


def run_cases(work: Path, results: Path, env, timeout: float, out) -> tuple:
    """`make test RESULTS=...` with student output shown, never obeyed:
    (True, "" or its failing exit) once it finished, else (False, why not)."""
    out.flush()
    with github_ci.commands_stopped(out):
        try:
            proc = subprocess.Popen(
                ["make", "--no-print-directory", "test", f"RESULTS={results}"],
                cwd=work,
                env=case_env(env),
                stdout=out.fileno(),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return False, f"the public cases could not start: {exc}"
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole tree: make, pytest, anything they started
            proc.wait()
            return False, f"the public cases did not finish within {timeout:g} s"
    return True, "" if proc.returncode == 0 else f"make test exited {proc.returncode}"


QUESTION_FIELDS = ("key", "label", "score", "max_score", "passed", "total")


def empty_document(points: dict, why: str, unit: int) -> dict:
    """A results document for a run that wrote none (or a damaged one):
    every question 0 of its public worth (points.json), and why."""
    worth = {q["key"]: 0 for q in points["questions"]}
    for name, weight in points["cases"].items():
        key = next((k for k in worth if name.startswith(k + "_")), None)
        if key is not None and weight > 0:
            worth[key] += round(weight * unit)
    return {
        "version": 1,
        "title": "needle hw1 (public cases)",
        "questions": [
            {
                "key": q["key"],
                "label": q["label"],
                "score": 0.0,
                "max_score": worth[q["key"]] / unit,
                "passed": 0,
                "total": 0,
            }
            for q in points["questions"]
        ],
        "cases": [],
        "errors": [{"message": f"{why}; see the log", "where": ""}],
        "notes": [],
        "report": "the log of the step running the public cases",
    }


def read_document(results: Path, points: dict, why: str, unit: int) -> dict:
    """The results `make test` wrote, or an empty document saying why not."""
    try:
        doc = json.loads(results.read_text(encoding="utf-8"))
        if not (
            isinstance(doc, dict)
            and isinstance(doc.get("cases"), list)
            and [q.get("key") for q in doc["questions"]] == [q["key"] for q in points["questions"]]
            and all(f in q for q in doc["questions"] for f in QUESTION_FIELDS)
        ):
            raise ValueError("not a results document of this assignment")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = why or f"the public cases' results are unreadable ({type(exc).__name__})"
        return empty_document(points, reason, unit)
    return doc


def write_atomic(path: Path, text: str):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def grade(checkout: Path, env, out, bundle: Path = BUNDLE):
    """Run the public cases: (results document, the points' unit), or
    (None, None) when they could not be set up."""
    config = load_config(bundle)
    with tempfile.TemporaryDirectory(prefix="hw1-classroom50-", dir=env.get("RUNNER_TEMP") or None) as tmp:
        work = Path(tmp) / "hw1"
        notes = stage(checkout, work, config, bundle)
        if not set_up(work, env, out):
            return None, None
        results = Path(tmp) / "results.json"
        finished, why = run_cases(work, results, env, config["timeout"], out)
        points = json.loads((work / config["points"]).read_text(encoding="utf-8"))
        # a run stopped midway wrote no results of its own: whatever is there is not the cases'
        doc = (
            read_document(results, points, why, config["unit"])
            if finished
            else empty_document(points, why, config["unit"])
        )
    doc["notes"] = notes + list(doc.get("notes", ()))
    return doc, config["unit"]


def main(argv=None, env=None, out=None) -> int:
    env, out = os.environ if env is None else env, out or sys.stdout
    if argv:
        print("usage: python autograder.py (no arguments; Classroom 50's runner runs it)", file=sys.stderr)
        return 2
    try:
        ids = classroom50_result.identity(env)
        doc, unit = grade(Path.cwd(), env, out)
    except (classroom50_result.EnvironmentIncomplete, BundleDamaged) as exc:
        print(f"autograder.py: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, classroom50_result.EnvironmentIncomplete) else 1
    if doc is None:
        return 1  # the runner records an error result; the log says why
    for line in github_ci.annotations(doc):
        print(line, file=out)
    payload = classroom50_result.result(doc, ids, unit, datetime.datetime.now(datetime.timezone.utc))
    write_atomic(Path.cwd() / BODY, classroom50_result.release_body(doc, payload))
    write_atomic(Path.cwd() / RESULT, json.dumps(payload, indent=2) + "\n")
    print(
        f"autograder.py: {payload['score']}/{payload['max-score']} points on the public cases "
        f"(exact {payload['exact-score']:g}/{payload['exact-max-score']:g}); wrote {RESULT} and {BODY}",
        file=out,
    )
    return 0
