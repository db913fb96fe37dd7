"""The handout's GitHub workflow, run as a runner would run it.

The shipped .github/workflows/grade.yml is parsed and each `run:` step runs
in order (bash -eo pipefail, as GitHub's default shell) in a copy of the
handout holding a catalogue bug, with the runner's GITHUB_* variables
pointing at temporary files. `uses:` steps (checkout, setup-python, cache)
are GitHub's own actions and are skipped: the copy is the checkout, this
Python stands in for setup-python (PYTHON=, so `make setup` makes no .venv)
and MNIST comes from $MNIST_DIR. GitHub Classroom's reporter is gone with
GitHub Classroom (discontinued 2026-08-28): its `result` output is written
only on request (--legacy-github-classroom), checked here too.

Each step's log is read as the runner reads it (`::stop-commands::` and
its token honoured), so the annotations checked are the ones GitHub would
show, and a student's print("::error::...") must not be one of them.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader import DATA, HANDOUT, ROOT
from catalogue import build, mutants

WORKFLOW = ".github/workflows/grade.yml"
TEMPLATES = ROOT / "grader" / "grading" / "platforms" / "ci_templates"
FORGED = 'print("::error file=README.md,line=1::forged by student code")'
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"


def steps(path: Path):
    (job,) = yaml.safe_load(path.read_text())["jobs"].values()
    return job["steps"]


def commands(log: str):
    """The workflow commands a runner would act on in `log`: (name, properties, message)."""
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


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A handout copy whose ops file has Log.gradient's sign wrong and prints a forged command there."""
    mutant = next(m for m in mutants.MUTANTS if m.name == "log_gradient_sign")
    sources = build.apply_edits(build.reference_sources(), mutant.edits)
    ops = build.OPS
    bug = "return negate(out_grad / node.inputs[0])"
    sources[ops] = sources[ops].replace(bug, f"{FORGED}\n        {bug}", 1)
    root = tmp_path_factory.mktemp("repo") / "hw1"
    shutil.copytree(HANDOUT, root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".venv", "data"))
    build.write_submission(root, sources)
    bug_line = sources[ops].splitlines().index(f"        {bug}") + 1
    return root, {bug_line - 1, bug_line}  # the planted lines: the print, then the wrong gradient


@pytest.fixture(scope="module")
def run(planted, tmp_path_factory):
    """Every `run:` step of the shipped workflow, in order: {step id or name: (log, outputs, summary)}."""
    root, _ = planted
    files = tmp_path_factory.mktemp("runner")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k != "PYTHONPATH"},
           "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(root),
           "PYTHON": sys.executable, "MNIST_DIR": str(DATA), "OPENBLAS_NUM_THREADS": "1"}
    done = {}
    for i, step in enumerate(steps(root / WORKFLOW)):
        if "uses" in step:
            continue
        assert "${{" not in step["run"], "a run: step with an expression: the test cannot run it as the runner would"
        script = files / f"step{i}.sh"
        script.write_text(step["run"])
        paths = {var: files / f"{var.lower()}{i}" for var in
                 ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")}
        for path in paths.values():
            path.touch()
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=root,
                              env={**env, **{k: str(v) for k, v in paths.items()}},
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, f"step {step.get('name')}: exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        outputs = dict(line.split("=", 1) for line in paths["GITHUB_OUTPUT"].read_text().splitlines() if "=" in line)
        done[step.get("id", step.get("name"))] = (proc.stdout + proc.stderr, outputs,
                                                  paths["GITHUB_STEP_SUMMARY"].read_text())
    return done


def test_the_workflow_is_valid_against_githubs_schema():
    for path in (HANDOUT / WORKFLOW, TEMPLATES / "classroom50-deadline.yml"):
        proc = subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows", str(path)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_gitlab_template_is_valid_against_gitlabs_schema():
    proc = subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.gitlab-ci",
                           str(TEMPLATES / "gitlab-ci.yml")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = yaml.safe_load((TEMPLATES / "gitlab-ci.yml").read_text())["grade"]
    assert job["artifacts"]["reports"]["junit"] == "out/junit.xml" and job["artifacts"]["when"] == "always"


def test_the_workflow_has_no_github_classroom_left(run):
    text = (HANDOUT / WORKFLOW).read_text()
    assert "autograding-grading-reporter" not in text and "github-classroom" not in text and "checks:" not in text
    assert "result" not in run["hw1"][1]   # the step writes no Classroom result by default


def test_annotations_land_on_the_bugs_lines(run, planted):
    _, bug_lines = planted
    errors = [(props, message) for name, props, message in commands(run["hw1"][0]) if name == "error"]
    assert errors, run["hw1"][0]
    on_ops = [props for props, _ in errors if props.get("file") == build.OPS]
    assert on_ops and {int(p["line"]) for p in on_ops} <= bug_lines, errors
    assert on_ops[0]["title"].startswith("Q2 backward%3A 2 cases fail")
    assert len(errors) <= 10


def test_the_summary_has_the_points_table_with_make_tests_total(run):
    log, _, summary = run["hw1"]
    test_log = run["Public cases"][0]
    total = re.search(r"^total\s+(\S+)/(\S+) \(public cases\)", test_log, re.M).groups()
    assert summary.splitlines()[0] == f"## needle hw1 (public cases): {total[0]} / {total[1]}"
    assert f"| **total** | 60/66 | **{total[0]}/{total[1]}** |" in summary
    hidden = sum(q["hidden_points"] for q in json.loads((HANDOUT / "tests/hw1/hw1_cases/points.json").read_text())["questions"])
    assert f"{hidden:.2f} more points" in summary  # the hidden cases' points, said, never run


def test_the_legacy_classroom_result_has_one_weighted_test_per_question(run, planted, tmp_path):
    root, _ = planted
    output = tmp_path / "GITHUB_OUTPUT"
    output.touch()
    proc = subprocess.run([sys.executable, "tests/hw1/hw1_cases/github_ci.py", ".hw1-results.json",
                           "--legacy-github-classroom"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GITHUB_OUTPUT": str(output)})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(base64.b64decode(output.read_text().strip().removeprefix("result=")))
    points = json.loads((HANDOUT / "tests/hw1/hw1_cases/points.json").read_text())
    assert result["version"] == 1 and result["status"] == "fail"
    assert [t["name"] for t in result["tests"]] == [f"{q['label']} {q['key']}" for q in points["questions"]]
    by_name = {t["name"]: t for t in result["tests"]}
    assert by_name["Q1 forward"]["score"] == by_name["Q1 forward"]["max_score"] == 6.25
    assert by_name["Q2 backward"]["status"] == "fail" and 0 < by_name["Q2 backward"]["score"] < 15.28
    public = round(sum(q["points"] - q["hidden_points"] for q in points["questions"]), 4)
    assert round(sum(t["max_score"] for t in result["tests"]), 4) == result["max_score"] == public
    assert round(sum(t["score"] for t in result["tests"]), 4) < result["max_score"]


def test_a_students_printed_command_is_not_interpreted(run):
    log = run["Public cases"][0]
    assert "::error file=README.md,line=1::forged by student code" in log  # printed, as text
    for step_log, _, _ in run.values():
        assert not any("forged" in message for _, _, message in commands(step_log))
    assert commands(log) == []  # the public cases' step gives the runner no command at all


def test_only_public_cases_reach_the_students_repository(run, planted):
    root, _ = planted
    doc = json.loads((root / ".hw1-results.json").read_text())
    public = json.loads((HANDOUT / "tests/hw1/hw1_cases/points.json").read_text())["cases"]
    assert {c["name"] for c in doc["cases"]} <= set(public)
