"""Prints your points per question as the last lines of every pytest run.

The cases are the grader's public cases (tests/hw1/test_cases.py). Each
passed case earns exactly the points the grader gives it
(tests/hw1/hw1_cases/points.json): the total is out of what the public
cases are worth, and the line under it says how many more points the
grader's hidden cases carry. Advisory cases go beyond the assignment and
carry no points.

A case that stops at a stub you have not written yet (NotImplementedError)
prints no traceback: it shows as N, and one line per question lists the
stubs those cases reached. An advisory case that does not pass shows as x
(xfailed, never "failed": it costs no points), and a line of its own under
"beyond the assignment (no points)" says why.

`--results-json FILE` (make test RESULTS=FILE) also writes every case's
result, its points and the line of yours it points at, as JSON: the GitHub
workflow (.github/workflows/grade.yml) renders it with
tests/hw1/hw1_cases/github_ci.py into annotations and the job summary, and
Classroom 50's autograder (`grader classroom50`) into its result.json.
"""
import importlib
import importlib.util
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

POINTS = Path(__file__).resolve().parent / "tests" / "hw1" / "hw1_cases" / "points.json"
CASE_TEST = "test_case"
UNIT = 10_000  # the grader's points are whole multiples of 1e-4

_passed = {}  # case name -> True while every phase so far passed
_stubs = {}   # case name -> the NotImplementedError it stopped at ("Q1: PowerScalar.compute")
_failures = {}  # case name -> (first line of why it failed, "path.py:LINE ..." of yours or "")
_errors = []    # (message, "path.py:LINE") of files that could not be collected (a SyntaxError)
_advisory = {}  # advisory case name -> the first line of why it did not pass (it xfailed)
ROOT = Path(__file__).resolve().parent
FILE_LINE = re.compile(r'File "(.+)", line (\d+)')
MAX_MESSAGE = 400


def pytest_configure(config):
    # Each question under the grader's own time and memory limits (hw1_cases/limits.json, student_limits.py).
    spec = importlib.util.spec_from_file_location("hw1_student_limits", POINTS.parent / "student_limits.py")
    if spec is not None and (POINTS.parent / "student_limits.py").is_file():
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.register(config, POINTS.parent / "limits.json")


def pytest_addoption(parser):
    parser.addoption("--results-json", metavar="FILE", default=None,
                     help="also write the cases' results as JSON (for tests/hw1/hw1_cases/github_ci.py)")
NOT_IMPLEMENTED = "not implemented"  # the outcome's name in pytest's count line
MAX_STUBS = 6  # stubs named per question line


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # `-k forward` matches by substring, so it would also run the Q6 case
    # nn_epoch_ndl_relu_forward: a -k that is exactly a question's key runs
    # that question's cases only.
    keyword = (config.getoption("keyword") or "").strip()
    if not _is_question(keyword):
        return
    keep, drop = [], []
    for item in items:
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        (drop if getattr(case, "question", keyword) != keyword else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _is_question(keyword):
    try:
        return keyword in {q["key"] for q in load_points()["questions"]}
    except (OSError, ValueError):
        return False


SUBMIT_FILE = "test_autograd_hw.py"  # the submit cases (make submit); it imports simple_ml


def _simple_ml_imports():
    """Whether apps/simple_ml.py imports (it is imported here, once)."""
    for folder in ("python", "apps"):
        if str(ROOT / folder) not in sys.path:
            sys.path.append(str(ROOT / folder))
    try:
        importlib.import_module("simple_ml")
    except (Exception, SystemExit):  # noqa: BLE001  (reported by Q5 and Q6's cases, test_cases.py)
        return False
    return True


def pytest_ignore_collect(collection_path, config):
    # A simple_ml.py that does not import would stop the collection of the
    # submit file, and with it every question: `make test` leaves that file
    # out then, so that only Q5 and Q6 lose their cases, as in the grader.
    # The mugrade client (submit_* functions) always collects it.
    if collection_path.name != SUBMIT_FILE or "submit_" in " ".join(config.getini("python_functions")):
        return None
    return None if _simple_ml_imports() else True


def case_of(nodeid):
    """The case name of a `test_case[<case>]` node id, None for anything else."""
    function = nodeid.split("::")[-1]
    if not function.startswith(CASE_TEST + "[") or not function.endswith("]"):
        return None
    return function[len(CASE_TEST) + 1:-1]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # A case that stopped at a stub: one line instead of a traceback.
    outcome = yield
    report = outcome.get_result()
    name = case_of(report.nodeid)
    if name is not None and call.when == "call" and hasattr(report, "wasxfail"):
        # an advisory case that did not pass (test_cases.advisory_outcome)
        why = (report.wasxfail.strip().splitlines() or ["did not pass"])[0][:MAX_MESSAGE]
        _advisory[name] = why
        _failures.setdefault(name, (why, dict(item.user_properties).get("where", "")))
        return
    if name is None or not report.failed or call.excinfo is None:
        return
    properties = dict(item.user_properties)
    # the `Likely cause:` and `Smallest failing input:` lines (test_cases.py) go under the
    # message, as in the grader's reports
    why = "\n".join(filter(None, [_why(item, call.excinfo), properties.get("cause", "")[:MAX_MESSAGE],
                                   properties.get("smallest", "")[:MAX_MESSAGE]]))
    _failures.setdefault(name, (why, properties.get("where", "")))
    if call.when != "call":
        return
    if call.excinfo.errisinstance(NotImplementedError):
        message = str(call.excinfo.value) or "(no message)"
        _stubs[name] = message
        report.longrepr = f"NotImplementedError: {message}"
        report.sections = []


def _why(item, excinfo):
    """One line: the case's own message (pytest.fail), else its description and the exception."""
    if excinfo.errisinstance(pytest.fail.Exception):
        text = str(excinfo.value)
    else:
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        text = f"{getattr(case, 'description', item.name)}: {excinfo.typename}: {excinfo.value}"
    return (text.strip().splitlines() or ["failed"])[0][:MAX_MESSAGE]


def pytest_collectreport(report):
    # A file that does not import (a SyntaxError in yours): no case runs, so
    # say where, as the compiler does, for the annotation.
    if not report.failed:
        return
    text = report.longreprtext
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")] or text.splitlines()
    places = [m for m in FILE_LINE.finditer(text) if Path(m.group(1)).resolve().is_relative_to(ROOT)
              and "tests" not in Path(m.group(1)).resolve().relative_to(ROOT).parts[:1]]
    where = ""
    if places:
        path = Path(places[-1].group(1)).resolve().relative_to(ROOT).as_posix()
        where = f"{path}:{places[-1].group(2)}"
    _errors.append(((lines[-1] if lines else "collection failed")[:MAX_MESSAGE], where))


def pytest_report_teststatus(report, config):
    # Counted apart ("N", "3 not implemented"), so pytest lists no stub
    # among its failures; the run still fails (exit status 1).
    if report.when == "call" and report.failed and case_of(report.nodeid) in _stubs:
        return NOT_IMPLEMENTED, "N", "NOT IMPLEMENTED"
    return None


def pytest_terminal_summary(terminalreporter):
    lines = stub_lines(_stubs, load_points())
    if lines:
        terminalreporter.write_sep("=", "not implemented yet")
        for line in lines:
            terminalreporter.write_line(line)
    if _advisory:
        terminalreporter.write_sep("=", "beyond the assignment (no points)")
        for line in advisory_lines(_advisory):
            terminalreporter.write_line(line)


def advisory_lines(advisory):
    """One line per advisory case that did not pass: its name and why."""
    return [f"{name} (xfailed, no points): {why}" for name, why in sorted(advisory.items())]


def stub_lines(stubs, points):
    """One line per question: how many of its cases stopped at a stub, and which stubs."""
    lines = []
    for q in points["questions"]:
        mine = {name: message for name, message in stubs.items() if name.startswith(q["key"] + "_")}
        if not mine:
            continue
        names = list(dict.fromkeys(m.replace(": ", " ", 1) for m in mine.values()))
        more = f" and {len(names) - MAX_STUBS} more" if len(names) > MAX_STUBS else ""
        scored = sum(points["cases"].get(name, 0) > 0 for name in mine)
        count = f"{scored} case{'s' * (scored != 1)}"
        if len(mine) > scored:
            count += f" (and {len(mine) - scored} advisory)"
        lines.append(f"{q['label']} {q['key']}: {count} stop at NotImplementedError: "
                     f"{', '.join(names[:MAX_STUBS])}{more}")
    return lines


def pytest_runtest_logreport(report):
    # A case counts as passed only if setup, call and teardown all passed.
    name = case_of(report.nodeid)
    if name is None:
        return
    ok = report.passed or (report.when != "call" and not report.failed and not report.skipped)
    _passed[name] = _passed.get(name, True) and ok


def load_points():
    return json.loads(POINTS.read_text(encoding="utf-8"))


def _points(units):
    return f"{units / UNIT:.2f}".rstrip("0").rstrip(".")


def points_table(passed, points):
    """The table's lines, from {case name: passed} and points.json's content;
    [] when no case ran. Points are out of what the public cases are worth:
    a complete, correct solution has them all; the line under the total says
    what the hidden cases add."""
    cases = points["cases"]
    question_of = {name: q["key"] for q in points["questions"] for name in cases if name.startswith(q["key"] + "_")}
    ran = {name: ok for name, ok in passed.items() if name in question_of}
    if not ran:
        return []
    lines = [f"{'question':<22}{'cases passed':>14}{'points':>14}"]
    earned_total, public_total, hidden, hidden_units, advisory, shown = 0, 0, [], 0, [0, 0], []
    for q in points["questions"]:
        label = f"{q['label']} {q['key']}"
        public = sum(round(cases[n] * UNIT) for n in question_of if question_of[n] == q["key"] and cases[n] > 0)
        scored = [n for n in ran if question_of[n] == q["key"] and cases[n] > 0]
        for name in ran:
            if question_of[name] == q["key"] and cases[name] == 0:
                advisory[0] += ran[name]
                advisory[1] += 1
        if not scored:
            lines.append(f"{label:<22}{'not run':>14}{'-/' + _points(public):>14}")
            continue
        shown.append(q["label"])
        earned = sum(round(cases[n] * UNIT) for n in scored if ran[n])
        earned_total, public_total = earned_total + earned, public_total + public
        count = f"{sum(ran[n] for n in scored)}/{len(scored)}"
        lines.append(f"{label:<22}{count:>14}{_points(earned) + '/' + _points(public):>14}")
        if q["hidden_cases"]:
            hidden_units += round(q["hidden_points"] * UNIT)
            hidden.append(f"{q['label']} {q['hidden_cases']} case{'s' * (q['hidden_cases'] != 1)}, "
                          f"{_points(round(q['hidden_points'] * UNIT))} points")
    of = "" if len(shown) == len(points["questions"]) else f" of {', '.join(shown)}"
    lines.append(f"{'total':<22}{'':>14}{_points(earned_total) + '/' + _points(public_total):>14} "
                 f"(public cases{of})")
    if hidden:
        lines.append(f"hidden cases: {_points(hidden_units)} more points are graded on hidden cases "
                     f"({'; '.join(hidden)}); your grade can differ only there.")
    if advisory[1]:
        lines.append(f"Beyond the assignment (no points): {advisory[0]} of {advisory[1]} advisory cases passed.")
    return lines


def results_document(passed, stubs, failures, errors, points):
    """The results document of hw1_cases/github_ci.py: the public cases that
    ran, with their points, why each failed and the line of yours it names."""
    cases = points["cases"]
    docs, questions = [], []
    for q in points["questions"]:
        mine = [n for n in passed if n in cases and n.startswith(q["key"] + "_")]
        scored = [n for n in mine if cases[n] > 0]
        public = sum(round(cases[n] * UNIT) for n in cases if n.startswith(q["key"] + "_") and cases[n] > 0)
        earned = sum(round(cases[n] * UNIT) for n in scored if passed[n])
        questions.append({"key": q["key"], "label": q["label"], "score": earned / UNIT, "max_score": public / UNIT,
                          "passed": sum(passed[n] for n in scored), "total": len(scored)})
        for n in mine:
            message, where = failures.get(n, ("", ""))
            docs.append({"name": n, "question": q["key"], "score": cases[n] if passed[n] else 0.0,
                         "max_score": cases[n], "passed": passed[n], "stub": stubs.get(n, ""),
                         "message": message or ("" if passed[n] else "failed"), "where": where})
    hidden = sum(q["hidden_points"] for q in points["questions"])
    return {"version": 1, "title": "needle hw1 (public cases)", "questions": questions, "cases": docs,
            "errors": [{"message": m, "where": w} for m, w in errors],
            "notes": [f"Points out of what the public cases are worth; the grader adds hidden cases "
                      f"worth {_points(round(hidden * UNIT))} more points, scored at the deadline."],
            "report": "the log of the step running the public cases"}


def _write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".results-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def pytest_sessionfinish(session):
    path = session.config.getoption("results_json", None)
    if path:
        doc = results_document(_passed, _stubs, _failures, _errors, load_points())
        _write_atomic(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")


def pytest_unconfigure(config):
    # Unconfigure comes after pytest's own summary and its final count line,
    # so the points are the last thing on the screen.
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None or not _passed:
        return
    lines = points_table(_passed, load_points())
    if not lines:
        return
    terminal.write_sep("=", "hw1 points")
    for line in lines:
        terminal.write_line(line)
