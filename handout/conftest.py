"""Prints your points per question at the end of every pytest run.

Each test's name carries its question's keyword (`-k forward` runs Q1).
A question's points are shared equally by its tests:
earned = points x passed / total.
"""
QUESTIONS = (  # (question, keyword in the test names, points)
    ("Q1", "forward", 10),
    ("Q2", "backward", 25),
    ("Q3", "topo_sort", 20),
    ("Q4", "compute_gradient", 25),
    ("Q5", "softmax_loss_ndl", 10),
    ("Q6", "nn_epoch_ndl", 10),
)
TOTAL_POINTS = sum(points for _, _, points in QUESTIONS)

_passed = {}  # test id -> True while every phase so far passed


def _question(nodeid):
    function = nodeid.split("::")[-1].split("[")[0]
    if not function.startswith("test"):
        return None  # e.g. submit_* functions run by `python -m mugrade`
    for question, keyword, _ in QUESTIONS:
        if keyword in function:
            return question
    return None


def pytest_runtest_logreport(report):
    # A test counts as passed only if setup, call and teardown all passed.
    ok = report.passed or (report.when != "call" and not report.failed and not report.skipped)
    _passed[report.nodeid] = _passed.get(report.nodeid, True) and ok


def _points(value):
    return f"{value:.2f}".rstrip("0").rstrip(".")


def pytest_terminal_summary(terminalreporter):
    counts = {q: [0, 0] for q, _, _ in QUESTIONS}
    for nodeid, ok in _passed.items():
        question = _question(nodeid)
        if question:
            counts[question][0] += ok
            counts[question][1] += 1
    if not any(total for _, total in counts.values()):
        return  # no public test ran: nothing to score
    write = terminalreporter.write_line
    terminalreporter.section("hw1 points")
    write(f"{'question':<22}{'tests passed':>14}{'points':>12}")
    earned_total = 0.0
    for question, keyword, points in QUESTIONS:
        passed, total = counts[question]
        if total == 0:
            write(f"{question + ' ' + keyword:<22}{'not run':>14}{'-/' + str(points):>12}")
            continue
        earned = points * passed / total
        earned_total += earned
        write(f"{question + ' ' + keyword:<22}{f'{passed}/{total}':>14}"
              f"{_points(earned) + '/' + str(points):>12}")
    write(f"{'total':<22}{'':>14}{_points(earned_total) + '/' + str(TOTAL_POINTS):>12}")
