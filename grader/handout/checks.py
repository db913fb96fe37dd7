"""Run the public tests against variants of the handout, and judge them.

The public tests are the grader's public cases (hw1: tests/hw1/test_cases.py,
one `test_case[<case name>]` each) and any test_* function of the
assignment's tests folder (tests/NAME).

Variants, each built in a scratch directory with the same builder:
- nothing stripped (the reference): every public test passes;
- everything stripped (the handout): it imports, and every test fails with
  NotImplementedError (never ImportError, SyntaxError, NameError...);
- only question Q stripped, for each Q: every test of Q fails with
  NotImplementedError naming Q. This proves each test reaches its own
  question's code, which the full handout cannot show (hw1's Q4 tests stop
  at the Q3 stub first, since autograd calls find_topo_sort before the Q4 block).

pytest runs in subprocesses (two at a time, one BLAS thread each); results
come back as JUnit XML.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader.core.assignment import Assignment
from grader.core.blas import one_thread_env
from grader.handout.build import HandoutError, build_tree
from grader.sandbox.env import site_packages

NOT_IMPLEMENTED_RE = re.compile(r"^NotImplementedError: (Q\d+): ")
PYTEST_TIMEOUT = 300  # seconds; a full run takes a few


@dataclass(frozen=True)
class PytestOutcome:
    name: str      # test name as pytest reports it, e.g. test_case[forward_log]
    status: str    # passed, failed, error, skipped
    message: str   # first line of the failure, "" if passed


CASE_TEST = "test_case"  # tests/NAME/test_cases.py: test_case[<grader case name>]


def keywords(assignment: Assignment) -> dict:
    """Question label -> the `-k` keyword its tests carry, from the case registry."""
    return {q.label: q.key for q in assignment.registry().questions}


def question_of(name: str, questions: dict) -> list[str]:
    """The questions (label -> keyword) of a test: a grader case's own (its name
    starts with the question's keyword), else those whose keyword the function's name contains."""
    function, _, param = name.partition("[")
    if function == CASE_TEST:
        return [q for q, keyword in questions.items() if param.startswith(keyword + "_")]
    return [q for q, keyword in questions.items() if keyword in function]


def _parse_junit(path: Path) -> list[PytestOutcome]:
    outcomes = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = "failed" if child.tag == "failure" else child.tag
                message = (child.get("message") or child.text or "").strip().splitlines()[:1]
                message = message[0] if message else ""
        outcomes.append(PytestOutcome(case.get("name", "?"), status, message))
    return outcomes


def _env(assignment: Assignment | None = None) -> dict:
    """Only the handout's own files may be importable, and the packages the
    grader runs student code with (assignment.toml's [environment]) come
    first, as in a student's .venv: the public cases' expected values were
    computed with them (numpy 1 and 2 differ in float widths)."""
    env = one_thread_env(PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    if assignment is not None and assignment.packages:
        from grader.grading.run.workers import sandbox_environment

        env["PYTHONPATH"] = str(site_packages(sandbox_environment(assignment)))
    return env


def run_pytest(root: Path, keyword: str | None = None, tests: str = "tests/hw1",
               assignment: Assignment | None = None) -> list[PytestOutcome]:
    """Run the public tests (the folder `tests`) in `root`, a handout tree; return every outcome."""
    xml = root / ".junit.xml"
    cmd = [sys.executable, "-m", "pytest", tests, "-q", "-p", "no:cacheprovider",
           f"--junitxml={xml}"] + (["-k", keyword] if keyword else [])
    env = _env(assignment)
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True,
                              timeout=PYTEST_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise HandoutError(f"{root}: the public tests took over {PYTEST_TIMEOUT} s; "
                           "look for an endless loop in the reference or the tests") from None
    if not xml.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise HandoutError(f"{root}: pytest produced no report (exit {proc.returncode}): "
                           + " | ".join(tail))
    return _parse_junit(xml)


def library_modules(assignment: Assignment) -> tuple:
    """What the questions' workers import (hw1: needle, simple_ml), in order."""
    return tuple(dict.fromkeys(m for q in assignment.registry().questions for m in q.imports))


def import_problems(root: Path, label: str, modules=("needle", "simple_ml")) -> list[str]:
    """The handout must import from its root as the course does it."""
    names = ", ".join(modules)
    code = f"import sys; sys.path += ['python', 'apps']; import {names}"
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=PYTEST_TIMEOUT, env=_env())
    if proc.returncode == 0:
        return []
    last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
    return [f"{label}: `import {names}` fails from the handout root: {last}"]


def _variant(src: Path, scratch: Path, name: str, strip, data: Path, assignment: Assignment) -> Path:
    root = scratch / name
    root.mkdir()
    build_tree(src, root, strip_questions=strip, assignment=assignment)
    (root / "data").symlink_to(data, target_is_directory=True)
    return root


def _naming_problems(outcomes, where, questions: dict) -> list[str]:
    problems = []
    for o in outcomes:
        if o.status != "error" and len(question_of(o.name, questions)) != 1:
            problems.append(f"{where}::{o.name}: the name must contain exactly one of "
                            + ", ".join(questions.values()))
    seen = {q for o in outcomes for q in question_of(o.name, questions)}
    problems += [f"{where}: no public test for {q} ({k})" for q, k in questions.items() if q not in seen]
    return problems


def _judge(label, where, outcomes, want) -> list[str]:
    """Problems with one run. want: 'pass', 'any-question' or a question like 'Q2'."""
    problems = []
    if not outcomes:
        return [f"{where}: no tests ran in the {label}"]
    for o in outcomes:
        match = NOT_IMPLEMENTED_RE.match(o.message)
        if want == "pass":
            ok = o.status == "passed"
        else:
            ok = o.status == "failed" and match and want in ("any-question", match.group(1))
        if not ok:
            expected = "pass" if want == "pass" else (
                "fail with NotImplementedError" + ("" if want == "any-question" else f" naming {want}"))
            problems.append(f"{where}::{o.name}: should {expected} in the {label}, "
                            f"got {o.status}" + (f": {o.message}" if o.message else ""))
    return problems


def check_public_tests(src: Path, questions=None, assignment: Assignment | None = None) -> list[str]:
    """Build the variants, run the public tests, return every problem found.

    questions: the labels of the one-question variants to run (all by default).
    """
    assignment = assignment or Assignment.hw1()
    keyword = keywords(assignment)
    data = (src / "data") if (src / "data").is_dir() else assignment.data
    if not data.is_dir():
        return [f"{src}/data: missing (run `make data`); the public tests read it"]
    data, tests = data.resolve(), assignment.tests_dir
    where = f"{src.as_posix()}/{tests}"
    plans = [("reference", frozenset(), None, "pass"), ("handout", None, None, "any-question")]
    plans += [(f"handout with only {q} stripped", frozenset({q}), keyword[q], q) for q in questions or keyword]
    with tempfile.TemporaryDirectory(prefix="handout-checks-") as tmp:
        roots = [_variant(src, Path(tmp), f"v{i}", strip, data, assignment)
                 for i, (_, strip, _, _) in enumerate(plans)]
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = list(pool.map(run_pytest, roots, [p[2] for p in plans], [tests] * len(plans),
                                 [assignment] * len(plans)))
        problems = import_problems(roots[1], "handout", library_modules(assignment))
    problems += _naming_problems(runs[0], where, keyword)
    for (label, _, _, want), outcomes in zip(plans, runs):
        problems += _judge(label, where, outcomes, want)
    return problems
