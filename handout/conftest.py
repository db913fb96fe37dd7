"""Prints your points per question as the last lines of every pytest run.

Each case's name carries its question's keyword (`-k forward` runs Q1).
A question's points are shared equally by its cases:
earned = points x passed / total.
"""
QUESTIONS = (  # (question, keyword in the case names, points)
    ("Q1", "forward", 10),
    ("Q2", "backward", 25),
    ("Q3", "topo_sort", 20),
    ("Q4", "compute_gradient", 25),
    ("Q5", "softmax_loss_ndl", 10),
    ("Q6", "nn_epoch_ndl", 10),
)
TOTAL_POINTS = sum(points for _, _, points in QUESTIONS)
# Cases the grader runs on top of these, whose inputs are not in the handout.
HIDDEN_CASES = {"Q1": 17, "Q2": 22, "Q3": 3, "Q4": 4, "Q5": 4, "Q6": 2}

_passed = {}  # case id -> True while every phase so far passed


def question_of(nodeid):
    """Q1..Q6 for a public case, None for anything else."""
    function = nodeid.split("::")[-1].split("[")[0]
    if not function.startswith("test"):
        return None  # e.g. submit_* functions run by `python -m mugrade`
    for question, keyword, _ in QUESTIONS:
        if keyword in function:
            return question
    return None


def pytest_runtest_logreport(report):
    # A case counts as passed only if setup, call and teardown all passed.
    ok = report.passed or (report.when != "call" and not report.failed and not report.skipped)
    _passed[report.nodeid] = _passed.get(report.nodeid, True) and ok


def _points(value):
    return f"{value:.2f}".rstrip("0").rstrip(".")


def points_table(passed):
    """The table's lines, from {case id: passed}; [] when no public case ran."""
    counts = {q: [0, 0] for q, _, _ in QUESTIONS}
    for nodeid, ok in passed.items():
        question = question_of(nodeid)
        if question:
            counts[question][0] += ok
            counts[question][1] += 1
    if not any(total for _, total in counts.values()):
        return []
    lines = [f"{'question':<22}{'cases passed':>14}{'points':>12}"]
    earned_total, hidden = 0.0, []
    for question, keyword, points in QUESTIONS:
        passed_count, total = counts[question]
        label = f"{question} {keyword}"
        if total == 0:
            lines.append(f"{label:<22}{'not run':>14}{'-/' + str(points):>12}")
            continue
        earned = points * passed_count / total
        earned_total += earned
        lines.append(f"{label:<22}{f'{passed_count}/{total}':>14}{_points(earned) + '/' + str(points):>12}")
        if HIDDEN_CASES.get(question):
            hidden.append(f"{question} {HIDDEN_CASES[question]}")
    lines.append(f"{'total':<22}{'':>14}{_points(earned_total) + '/' + str(TOTAL_POINTS):>12}")
    if hidden:
        lines.append(f"Grading adds hidden cases ({', '.join(hidden)}): your grade can differ.")
    return lines


def pytest_unconfigure(config):
    # Unconfigure comes after pytest's own summary and its final count line,
    # so the points are the last thing on the screen.
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    lines = points_table(_passed)
    if terminal is None or not lines:
        return
    terminal.write_sep("=", "hw1 points")
    for line in lines:
        terminal.write_line(line)
