"""Prints your points per question as the last lines of every pytest run.

The cases are the grader's public cases (tests/hw1/test_cases.py). Each
passed case earns exactly the points the grader gives it
(tests/hw1/hw1_cases/points.json); the grader adds hidden cases, whose
points the last lines name. Advisory cases go beyond the assignment and
carry no points.
"""
import json
from pathlib import Path

import pytest

POINTS = Path(__file__).resolve().parent / "tests" / "hw1" / "hw1_cases" / "points.json"
CASE_TEST = "test_case"
UNIT = 10_000  # the grader's points are whole multiples of 1e-4

_passed = {}  # case name -> True while every phase so far passed


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


def case_of(nodeid):
    """The case name of a `test_case[<case>]` node id, None for anything else."""
    function = nodeid.split("::")[-1]
    if not function.startswith(CASE_TEST + "[") or not function.endswith("]"):
        return None
    return function[len(CASE_TEST) + 1:-1]


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
    [] when no case ran."""
    cases = points["cases"]
    question_of = {name: q["key"] for q in points["questions"] for name in cases if name.startswith(q["key"] + "_")}
    ran = {name: ok for name, ok in passed.items() if name in question_of}
    if not ran:
        return []
    lines = [f"{'question':<22}{'cases passed':>14}{'points':>14}"]
    earned_total, total_points, hidden, advisory = 0, 0, [], [0, 0]
    for q in points["questions"]:
        total_points += q["points"]
        label = f"{q['label']} {q['key']}"
        scored = [n for n in ran if question_of[n] == q["key"] and cases[n] > 0]
        for name in ran:
            if question_of[name] == q["key"] and cases[name] == 0:
                advisory[0] += ran[name]
                advisory[1] += 1
        if not scored:
            lines.append(f"{label:<22}{'not run':>14}{'-/' + str(q['points']):>14}")
            continue
        earned = sum(round(cases[n] * UNIT) for n in scored if ran[n])
        earned_total += earned
        count = f"{sum(ran[n] for n in scored)}/{len(scored)}"
        lines.append(f"{label:<22}{count:>14}{_points(earned) + '/' + str(q['points']):>14}")
        if q["hidden_cases"]:
            hidden.append(f"{q['label']} {q['hidden_cases']} case{'s' * (q['hidden_cases'] != 1)} "
                          f"({_points(round(q['hidden_points'] * UNIT))} points)")
    lines.append(f"{'total':<22}{'':>14}{_points(earned_total) + '/' + str(total_points):>14}")
    if hidden:
        lines.append(f"The grader adds hidden cases: {', '.join(hidden)}; your grade can differ only there.")
    if advisory[1]:
        lines.append(f"Beyond the assignment (no points): {advisory[0]} of {advisory[1]} advisory cases passed.")
    return lines


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
