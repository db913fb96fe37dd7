"""The student's line a failed case points at, as "path/in/submission.py:LINE"
(CaseResult.where: CI annotations and JUnit file/line attributes).

- A public case that raised: the frame the worker's `where:` names (the
  same line report.md shows).
- Otherwise (a wrong value, or a hidden case, whose feedback never says
  where student code raised: the line could carry out what the inputs
  were): the `def` line of the function the case exercises, found by
  reading the student's source as text. Student code is never imported or
  parsed here; a plain line scan cannot be made to misbehave.
"""

import re

from grader.shipped.where import NAME

AT = re.compile(r"\(at ([\w.\-/]+\.py):(\d+)")
# hw1's: where a question's code lives when a case's description names no
# function of it ("a chain of 6 scalar ops"). Another assignment without an
# entry here still gets lines from descriptions that name functions.
QUESTION_CODE = {
    "topo_sort": "find_topo_sort",
    "compute_gradient": "compute_gradient_of_variables",
    "softmax_loss_ndl": "softmax_loss",
    "nn_epoch_ndl": "nn_epoch",
}
BEGIN = "### BEGIN YOUR SOLUTION"  # the handout's marker: the student's code starts under it


def _def_at(lines, name, start, indented):
    """Index of `def name(` (indented inside a class, or at module level) from `start`."""
    pattern = re.compile(rf"^\s+def {name}\s*\(" if indented else rf"^def {name}\s*\(")
    for i in range(start, len(lines)):
        if pattern.match(lines[i]):
            return i
        if indented and i > start and re.match(r"^(class|def)\s", lines[i]):
            return None  # the class ended
    return None


def _body_start(lines, start):
    """The first line of the student's code in the function defined at
    `start`: under its `### BEGIN YOUR SOLUTION` marker if it kept one
    (where the handout asked for the code), else the `def` line itself."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    for i in range(start + 1, len(lines)):
        stripped = lines[i].strip()
        if stripped and len(lines[i]) - len(lines[i].lstrip()) <= indent:
            break  # the function ended
        if stripped == BEGIN:
            code = next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip() and not lines[j].strip().startswith("#")), None
            )
            return code if code is not None else start
    return start


def def_line(text, dotted):
    """1-based line of the student's code in "Class.method", in a class's
    `compute` for "Class" (else the class line), in a module-level function
    "name"; None if absent."""
    lines = text.splitlines()
    head, _, method = dotted.partition(".")
    if "." in method:
        return None
    for i, line in enumerate(lines):
        if re.match(rf"^class {head}\b", line):
            found = _def_at(lines, method or "compute", i, indented=True)
            return (i if found is None else _body_start(lines, found)) + 1
    found = None if method else _def_at(lines, head, 0, indented=False)
    return None if found is None else _body_start(lines, found) + 1


def _candidates(case):
    """Names to look for: dotted ones in the description first ("Log.gradient"),
    then its other words, then the question's own function."""
    names = NAME.findall(case.description or "")
    dotted = [n for n in names if "." in n]
    return dotted + [n for n in names if "." not in n] + [QUESTION_CODE.get(case.question, "")]


def static_where(case, sources, display):
    """ "path:LINE" of the function `case` exercises in the student's files."""
    for name in filter(None, _candidates(case)):
        for rel, text in sources.items():
            line = def_line(text, name)
            if line:
                return f"{display.get(rel, rel)}:{line}"
    return ""


def raised_where(problem, display):
    """ "path:LINE" from a worker's "(at path:LINE in ...)", "" when none."""
    match = AT.search(problem or "")
    return f"{display.get(match.group(1), match.group(1))}:{match.group(2)}" if match else ""


def case_where(case, outcome, run, sources, display):
    """The line to point a failed case at ("" when the case passed is the caller's business)."""
    if run.import_error:
        return raised_where(run.import_error, display)
    if not case.hidden and not outcome.ok:
        return raised_where(outcome.problem, display) or static_where(case, sources, display)
    return static_where(case, sources, display)
