"""`grader classroom50 OUTDIR`, and its autograder.py run as Classroom 50's
runner runs it.

The runner (foundation50/classroom50, .github/scripts/runner.py) runs
`python autograder.py` with the runner's Python, in the student's checkout
(a real git repository, full history), with the grade job's environment
and what run_entrypoint adds (USERNAME, OWNER, ASSIGNMENT_TYPE, COMMIT_URL,
RELEASE_URL, REVIEW_URL, CLASSROOM50_BUNDLE_DIR). Here that Python is one
without numpy (the autograder needs only the standard library; the cases
run under $PYTHON, as `make test PYTHON=...`), the checkout is the handout
as a template repository, accepted, then the reference's solutions (the
correct student) or those with one catalogue bug (the buggy one).

result.json is checked with `validate_result` below, which applies
collect-scores' rules (collect_scores.py validate_result: schema, identity,
submit/ tag, non-empty strings, non-negative integers that are not bools,
score <= max-score, tests' shapes) and the contract's sums (wiki,
Advanced-Autograding: score / max-score are the sums of the tests').
"""

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from catalogue import build, mutants

from grader import DATA, HANDOUT, ROOT

SCHEMA = "classroom50/result/v1"
FORGED = 'print("::error file=README.md,line=1::forged by student code")'
BUG = "power_scalar_gradient_off_by_one"  # one wrong line in Q2 backward
POINTS = json.loads((HANDOUT / "tests/hw1/hw1_cases/points.json").read_text())["questions"]
HIDDEN_POINTS = sum(q["hidden_points"] for q in POINTS)
PUBLIC_POINTS = round(sum(q["points"] for q in POINTS) - HIDDEN_POINTS)  # whole points, as Classroom 50 counts


def _nonneg_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def validate_result(payload, classroom: str, assignment: str, owner: str, is_group: bool = False):
    """Raise ValueError as collect-scores would, plus the contract's sums."""
    if not isinstance(payload, dict):
        raise ValueError("top-level value must be an object")
    if payload.get("schema") != SCHEMA:
        raise ValueError(f"schema = {payload.get('schema')!r}")
    for field, want in (("classroom", classroom), ("assignment", assignment)):
        if payload.get(field) != want:
            raise ValueError(f"{field} = {payload.get(field)!r}, want {want!r}")
    if not isinstance(payload.get("owner"), str) or payload["owner"].lower() != owner.lower():
        raise ValueError(f"owner = {payload.get('owner')!r}, want {owner!r}")
    if payload.get("assignment_type") != ("group" if is_group else "individual"):
        raise ValueError(f"assignment_type = {payload.get('assignment_type')!r}")
    if not isinstance(payload.get("submission"), str) or not payload["submission"].startswith("submit/"):
        raise ValueError(f"submission = {payload.get('submission')!r}")
    for field in ("submission", "commit", "release", "review", "datetime"):
        if not isinstance(payload.get(field), str) or not payload[field]:
            raise ValueError(f"{field} must be a non-empty string")
    score, most, tests = payload.get("score"), payload.get("max-score"), payload.get("tests")
    if not _nonneg_int(score) or not _nonneg_int(most) or score > most:
        raise ValueError(f"score {score!r} / max-score {most!r}")
    if not isinstance(tests, list):
        raise ValueError("tests must be a list")
    for i, test in enumerate(tests):
        if not isinstance(test, dict) or not isinstance(test.get("test-name"), str) or not test["test-name"]:
            raise ValueError(f"tests[{i}]: no test-name")
        if not isinstance(test.get("passed"), bool):
            raise ValueError(f"tests[{i}].passed must be a boolean")
        if not _nonneg_int(test.get("score")) or not _nonneg_int(test.get("max-score")):
            raise ValueError(f"tests[{i}]: score and max-score must be non-negative integers")
        if test["score"] > test["max-score"]:
            raise ValueError(f"tests[{i}].score > max-score")
    if score != sum(t["score"] for t in tests) or most != sum(t["max-score"] for t in tests):
        raise ValueError("score / max-score are not the sums of the tests'")


def commands(log: str):
    """The workflow commands a runner acts on in `log` (`::stop-commands::` honoured)."""
    found, stopped = [], None
    for line in log.splitlines():
        if stopped:
            stopped = None if line == f"::{stopped}::" else stopped
            continue
        match = re.match(r"^::([\w-]+)(?: ([^:]*))?::(.*)$", line)
        if not match:
            continue
        name, props, message = match.groups()
        if name == "stop-commands":
            stopped = message
            continue
        found.append((name, dict(p.split("=", 1) for p in props.split(",")) if props else {}, message))
    return found


def runner_python() -> str:
    """A Python without numpy, as a runner has before any setup (else this one)."""
    for candidate in ("/usr/bin/python3", shutil.which("python3", path="/usr/bin:/bin")):
        if candidate and subprocess.run([candidate, "-c", "import numpy"], capture_output=True).returncode:
            return candidate
    return sys.executable


def _git(repo: Path, *args, env=None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=s", "-c", "user.email=s@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.strip()


def student_repo(path: Path, sources) -> Path:
    """The handout as the template, Classroom 50's accept commit, then the student's work."""
    shutil.copytree(HANDOUT, path, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".venv", "data"))
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "Initial commit")
    (path / ".classroom50.yaml").write_text("classroom: dl\nassignment: hw1\n")
    (path / ".github/workflows/autograde.yaml").write_text("name: autograde\non: push\njobs: {}\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "Accept dl/hw1")
    build.write_submission(path, sources)
    _git(path, "add", "-A")
    # a committer date the student chose: nothing here may trust it
    _git(path, "commit", "-qm", "Submit hw1", env={**os.environ, "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"})
    return path


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("classroom50") / "hw1"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "classroom50", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return out


def run_autograder(bundle: Path, repo: Path, tmp: Path, owner="alice", env_drop=(), cases_python=sys.executable):
    """autograder.py as runner.py's run_entrypoint runs it: (exit, log, GITHUB_OUTPUT text)."""
    sha = _git(repo, "rev-parse", "HEAD")
    tag = f"submit/2026-11-26T19-00-00Z-{sha[:7]}"
    _git(repo, "tag", tag)
    repository, server = f"dl-course/dl-hw1-{owner}", "https://github.com"
    files = {name: tmp / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")}
    for path in files.values():
        path.touch()
    (tmp / "runner").mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHON", "VIRTUAL_ENV"))}
    env = {
        **base,
        **{k: str(v) for k, v in files.items()},
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_REPOSITORY": repository,
        "GITHUB_SHA": sha,
        "GITHUB_SERVER_URL": server,
        "GITHUB_ACTOR": owner,
        "GITHUB_ACTOR_ID": "12345",
        "GITHUB_WORKSPACE": str(repo),
        "RUNNER_TEMP": str(tmp / "runner"),
        # the grade job's env (autograde-runner.yaml)
        "PAGES_BASE_URL": "https://dl-course.github.io/classroom50",
        "CLASSROOM": "dl",
        "ASSIGNMENT": "hw1",
        "SUBMISSION_TAG": tag,
        "SECRET": "",
        "MODE": "individual",
        "ALLOWED_FILES": "[]",
        "RELEASE_ASSETS": "[]",
        # what run_entrypoint adds
        "CLASSROOM50_BUNDLE_DIR": str(bundle),
        "USERNAME": owner,
        "OWNER": owner,
        "ASSIGNMENT_TYPE": "individual",
        "COMMIT_URL": f"{server}/{repository}/commit/{sha}",
        "RELEASE_URL": f"{server}/{repository}/releases/tag/{urllib.parse.quote(tag, safe='')}",
        "REVIEW_URL": f"{server}/{repository}/compare/{_git(repo, 'rev-parse', 'HEAD~1')}...{sha}",
        # the cases' interpreter and data, as `make test PYTHON=... MNIST_DIR=...`
        "PYTHON": cases_python,
        "MNIST_DIR": str(DATA),
        "OPENBLAS_NUM_THREADS": "1",
    }
    for name in env_drop:
        env.pop(name)
    proc = subprocess.run(
        [runner_python(), str(bundle / "autograder.py")], cwd=repo, env=env, capture_output=True, text=True, timeout=900
    )
    return proc.returncode, proc.stdout + proc.stderr, files["GITHUB_OUTPUT"].read_text()


@pytest.fixture(scope="module")
def correct(bundle, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("correct")
    repo = student_repo(tmp / "dl-hw1-alice", build.reference_sources())
    return repo, run_autograder(bundle, repo, tmp)


@pytest.fixture(scope="module")
def buggy(bundle, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("buggy")
    mutant = next(m for m in mutants.MUTANTS if m.name == BUG)
    sources = build.apply_edits(build.reference_sources(), mutant.edits)
    bad = mutant.edits[0].code.strip()
    lines = sources[build.OPS].splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == bad)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at:at] = [indent + FORGED]  # a student's print of a forged workflow command, just above the bug
    sources[build.OPS] = "\n".join(lines) + "\n"
    bug_line = at + 2  # 1-based: the print is line at + 1
    repo = student_repo(tmp / "dl-hw1-bob", sources)
    return repo, run_autograder(bundle, repo, tmp, owner="bob"), {bug_line - 1, bug_line}


def result_of(repo: Path) -> dict:
    return json.loads((repo / "result.json").read_text())


def test_the_folder_holds_the_autograder_the_modules_and_the_pristine_handout(bundle):
    assert (
        (bundle / "autograder.py")
        .read_text()
        .startswith(
            "# Generated from grader/grading/platforms/classroom50.py by `grader classroom50 OUTDIR`; do not edit."
        )
    )
    for name in ("classroom50_autograde.py", "classroom50_result.py", "int_points.py", "github_ci.py"):
        assert (
            (bundle / "needle_autograde" / name)
            .read_text()
            .startswith(f"# Generated from grader/shipped/{name} by `grader classroom50 OUTDIR`")
        )
    assert (bundle / "handout/conftest.py").read_bytes() == (HANDOUT / "conftest.py").read_bytes()
    assert not (bundle / "handout/.github").exists()  # the runner, not the handout's workflow, runs it
    config = json.loads((bundle / "bundle.json").read_text())
    assert config["student_files"] == [
        "python/needle/autograd.py",
        "python/needle/ops/ops_mathematic.py",
        "apps/simple_ml.py",
    ]


def test_a_correct_checkout_gets_every_public_point(correct):
    repo, (status, log, _) = correct
    assert status == 0, log
    result = result_of(repo)
    validate_result(result, "dl", "hw1", "alice")
    assert result["score"] == result["max-score"] == PUBLIC_POINTS == sum(t["score"] for t in result["tests"])
    assert [t["test-name"] for t in result["tests"]] == [
        "Q1 forward",
        "Q2 backward",
        "Q3 topo_sort",
        "Q4 compute_gradient",
        "Q5 softmax_loss_ndl",
        "Q6 nn_epoch_ndl",
    ]
    assert all(t["passed"] for t in result["tests"])
    assert not [c for c in commands(log) if c[0] == "error"], log


def test_a_buggy_checkout_loses_points_on_the_buggy_question_only(buggy):
    repo, (status, log, _), _ = buggy
    assert status == 0, log
    result = result_of(repo)
    validate_result(result, "dl", "hw1", "bob")
    lost = {t["test-name"]: t for t in result["tests"] if not t["passed"]}
    assert list(lost) == ["Q2 backward"], result["tests"]
    assert lost["Q2 backward"]["score"] < lost["Q2 backward"]["max-score"]
    assert result["max-score"] == PUBLIC_POINTS and result["score"] < PUBLIC_POINTS
    assert result["score"] == sum(t["score"] for t in result["tests"])


def test_annotations_land_on_the_bugs_line_and_student_commands_stay_text(buggy):
    repo, (_, log, outputs), bug_lines = buggy
    errors = [props for name, props, _ in commands(log) if name == "error"]
    assert errors and all(p["file"] == build.OPS and int(p["line"]) in bug_lines for p in errors), errors
    assert errors[0]["title"].startswith("Q2 backward%3A 1 case fails")
    assert "::error file=README.md,line=1::forged by student code" in log  # shown, as text
    assert not any("forged" in message for _, _, message in commands(log))
    assert "result=" not in outputs  # no GitHub Classroom reporter output on this path


def test_the_release_body_has_the_points_table_and_the_likely_cause(buggy):
    repo, (_, log, _), _ = buggy
    body = (repo / "release-body.md").read_text()
    result = result_of(repo)
    assert body.startswith(f"### needle hw1 (public cases): {result['score']}/{PUBLIC_POINTS} points")
    q2 = next(t for t in result["tests"] if t["test-name"] == "Q2 backward")
    assert f"| Q2 backward | {q2['cases-passed']} FAIL | {q2['score']}/{q2['max-score']} |" in body
    assert "| Q1 forward | 25/25 PASS | 6/6 | 6.25/6.25 |" in body
    assert f"{HIDDEN_POINTS:.2f} more points" in body  # the hidden cases: said, never run
    # make test's own feedback in the log, and in the annotation as the GitHub path words it
    assert "Likely cause: PowerScalar.gradient keeps the exponent" in log
    (annotation,) = [m for name, _, m in commands(log) if name == "error"]
    assert "%0ALikely cause: PowerScalar.gradient keeps the exponent%0ASmallest failing input: " in annotation


def test_the_student_cannot_change_the_tests_that_grade_them(bundle, tmp_path):
    repo = student_repo(tmp_path / "dl-hw1-eve", build.reference_sources())
    points = repo / "tests/hw1/hw1_cases/points.json"
    points.write_text(points.read_text().replace('"forward_', '"renamed_'))
    (repo / "python/needle/autograd.py").unlink()  # and a student file gone: its stub is graded
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "edit the tests")
    status, log, _ = run_autograder(bundle, repo, tmp_path, owner="eve")
    assert status == 0, log
    result = result_of(repo)
    validate_result(result, "dl", "hw1", "eve")
    assert result["max-score"] == PUBLIC_POINTS
    assert "python/needle/autograd.py: not a file in your repository" in (repo / "release-body.md").read_text()


def test_without_the_runners_variables_it_writes_nothing_and_says_which(bundle, tmp_path):
    repo = student_repo(tmp_path / "dl-hw1-alice", build.reference_sources())
    status, log, _ = run_autograder(bundle, repo, tmp_path, env_drop=("CLASSROOM", "SUBMISSION_TAG"))
    assert status == 2
    assert log.strip().splitlines() == [
        "autograder.py: CLASSROOM, SUBMISSION_TAG not set: run it from Classroom 50's runner, which sets them "
        "(see docs/instructor/ci/classroom50.md)"
    ]
    assert not (repo / "result.json").exists() and not (repo / "release-body.md").exists()


def test_a_student_file_that_does_not_import_scores_0_and_points_at_its_line(bundle, tmp_path):
    sources = build.reference_sources()
    lines = sources[build.AUTOGRAD].splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("def find_topo_sort("))
    lines[at] = lines[at].replace("def find_topo_sort(", "def find_topo_sort((", 1)
    sources[build.AUTOGRAD] = "\n".join(lines) + "\n"
    repo = student_repo(tmp_path / "dl-hw1-alice", sources)
    status, log, _ = run_autograder(bundle, repo, tmp_path)
    assert status == 0, log
    result = result_of(repo)
    validate_result(result, "dl", "hw1", "alice")
    assert result["score"] == 0 and result["max-score"] == PUBLIC_POINTS
    errors = {(p.get("file"), p.get("line"), p.get("title")) for name, p, _ in commands(log) if name == "error"}
    assert errors == {(build.AUTOGRAD, str(at + 1), "not run")}


def test_a_setup_that_fails_is_an_error_for_the_runner_and_writes_nothing(bundle, tmp_path):
    repo = student_repo(tmp_path / "dl-hw1-alice", build.reference_sources())
    # $PYTHON without numpy: `make setup` refuses it
    status, log, _ = run_autograder(bundle, repo, tmp_path, cases_python=runner_python())
    assert status == 1
    errors = [(props, m) for name, props, m in commands(log) if name == "error"]
    assert errors == [({"title": "not graded"}, "make setup data failed (exit 2); the public cases did not run")]
    assert not (repo / "result.json").exists() and not (repo / "release-body.md").exists()


def test_a_submission_that_hangs_is_stopped_and_scored_0(bundle, tmp_path):
    slow = tmp_path / "bundle"
    shutil.copytree(bundle, slow)
    config = json.loads((slow / "bundle.json").read_text())
    (slow / "bundle.json").write_text(json.dumps({**config, "timeout": 5}))
    sources = build.reference_sources()
    sources[build.SIMPLE_ML] = "import time\nwhile True:\n    time.sleep(1)\n" + sources[build.SIMPLE_ML]
    repo = student_repo(tmp_path / "dl-hw1-alice", sources)
    status, log, _ = run_autograder(slow, repo, tmp_path)
    assert status == 0, log
    result = result_of(repo)
    validate_result(result, "dl", "hw1", "alice")
    assert result["score"] == 0 and result["max-score"] == PUBLIC_POINTS
    assert any("did not finish within 5 s" in m for name, _, m in commands(log) if name == "error")
    running = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(tmp_path / "runner") not in running  # make, pytest and the student's loop are gone


def test_grader_classroom50_refuses_a_folder_in_use(tmp_path):
    out = tmp_path / "hw1"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "classroom50", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"grader classroom50: {out}: exists and is not an empty folder; remove it or name a new one\n"
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and not list(tmp_path.glob(".hw1.*"))


VALID = {
    "schema": SCHEMA,
    "classroom": "dl",
    "assignment": "hw1",
    "assignment_type": "individual",
    "owner": "alice",
    "submission": "submit/2026-11-26T19-00-00Z-abcdef0",
    "commit": "https://x/commit/1",
    "release": "https://x/releases/tag/1",
    "review": "https://x/commit/1",
    "datetime": "2026-11-26T19:00:00Z",
    "score": 3,
    "max-score": 5,
    "tests": [
        {"test-name": "Q1", "passed": True, "score": 2, "max-score": 2},
        {"test-name": "Q2", "passed": False, "score": 1, "max-score": 3},
    ],
}


def _changed(path, value):
    payload = json.loads(json.dumps(VALID))
    *parents, last = path
    target = payload
    for key in parents:
        target = target[key]
    target[last] = value
    return payload


@pytest.mark.parametrize(
    "path, value, why",
    [
        (("owner",), "mallory", "owner"),
        (("classroom",), "other", "classroom"),
        (("schema",), "classroom50/result/v2", "schema"),
        (("submission",), "v1.0", "submission"),
        (("review",), "", "review"),
        (("score",), 3.0, "score"),
        (("max-score",), True, "max-score"),
        (("tests", 1, "score"), 1.5, "non-negative integers"),
        (("tests", 1, "passed"), "no", "boolean"),
        (("tests", 0, "score"), 3, "score > max-score"),
        (("score",), 4, "sums"),
    ],
)
def test_the_validator_rejects_what_collect_scores_rejects(path, value, why):
    validate_result(VALID, "dl", "hw1", "alice")  # the unchanged payload passes
    with pytest.raises(ValueError, match=why):
        validate_result(_changed(path, value), "dl", "hw1", "alice")
