# Generated from reference/tests/hw1/test_cases.py by `make handout`; do not edit.
"""The grader's public cases, run on your code the way the grader runs them.

    python -m pytest tests/hw1 -k forward      (or: make test Q=forward)

Each case (tests/hw1/hw1_cases/, one module per question) computes one value
with your needle or simple_ml, and the grader's own check compares it with
the reference's value (hw1_cases/expected/). A case you pass here earns the
same points from the grader; the grader adds hidden cases (the table at the
end says how many). Cases marked advisory go beyond the assignment and
never cost points: one that does not pass is reported as xfailed, never as
failed, with its reason in the "beyond the assignment" lines at the end.
"""
import functools
import inspect
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.append("./python")
sys.path.append("./apps")

import needle as ndl  # noqa: E402
from hw1_cases import BEYOND, BY_NAME, CASES, CONTRACT, QUESTION, read_test_set  # noqa: E402
from hw1_cases.checks import check  # noqa: E402
from hw1_cases.compare import describe  # noqa: E402
from hw1_cases.where import STUDENT_CODE, load_code, where as find_where  # noqa: E402
from hw1_cases import calls, likely_cause, smallest  # noqa: E402



def _import_simple_ml():
    """apps/simple_ml.py, or the exception importing it raised: as in the
    grader, a simple_ml.py that does not import costs only the questions
    that use it (Q5, Q6); the others are still run and scored."""
    try:
        import simple_ml as module
    except (Exception, SystemExit) as exc:  # noqa: BLE001  (your file's error, reported by Q5 and Q6's cases)
        return None, exc
    return module, None


simple_ml, SIMPLE_ML_ERROR = _import_simple_ml()
HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "hw1_cases" / "expected"
CAUSES = HERE / "hw1_cases" / "causes.json"
ROOT = Path.cwd().resolve()
_values = {}  # value key -> (True, value) or (False, exception): each case function runs once
_tracebacks = {}  # value key -> its exception's traceback where the case function raised it


def _decode(node):
    if isinstance(node, dict):
        if set(node) == {"npy"}:
            return np.load(EXPECTED / node["npy"], allow_pickle=False)
        return {k: _decode(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_decode(v) for v in node]
    return node


def expected_value(case):
    record = json.loads((EXPECTED / f"{case.value_key}.json").read_text())
    return _decode(record["value"])


def plain(value):
    """What the grader's worker sends back: numbers, arrays, lists, dicts."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value, copy=True, subok=False)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def computed(case):
    __tracebackhide__ = True
    key = case.value_key
    if key not in _values:
        try:
            if SIMPLE_ML_ERROR is not None and "simple_ml" in QUESTION[case.question].imports:
                raise SIMPLE_ML_ERROR
            _values[key] = (True, plain(BY_NAME[key].fn(ndl, simple_ml)))
        except Exception as exc:  # reported by every case that checks this value
            _values[key] = (False, exc)
            _tracebacks[key] = exc.__traceback__
    ok, value = _values[key]
    if not ok:  # as first raised: a case raising it again would add pytest's frames of the one before
        value = value.with_traceback(_tracebacks[key])
    return ok, value


def where(exc, case):
    """Your line the exception came from, as the grader names it: in the
    function the case exercises, else the innermost one of your own code."""
    code = load_code(HERE / "hw1_cases" / STUDENT_CODE)
    source = BY_NAME[case.value_key]  # the case that computed the value, as in the grader
    return find_where(exc, source.description, str(ROOT), code) or "(not in your files)"


# Where a question's code lives when the case's description names no function.
QUESTION_CODE = {"topo_sort": "autograd.find_topo_sort", "compute_gradient": "autograd.compute_gradient_of_variables",
                 "softmax_loss_ndl": "softmax_loss", "nn_epoch_ndl": "nn_epoch"}


def _lookup(dotted):
    """The needle or simple_ml object a dotted name names, or None."""
    for base in (ndl, simple_ml):
        obj = base
        for part in dotted.split("."):
            obj = getattr(obj, part, None)
        if obj is not None and not isinstance(obj, type(np)):
            return getattr(obj, "compute", obj) if isinstance(obj, type) else obj
    return None


SOLUTION_MARKER = "### BEGIN" + " YOUR SOLUTION"  # split: the handout's builder would take it for a marker


def _code_line(lines, start):
    """The line of your code in a function's source: the first one under its
    solution marker, else its `def` line."""
    marker = next((i for i, text in enumerate(lines) if text.strip() == SOLUTION_MARKER), None)
    code = None if marker is None else next(
        (i for i in range(marker + 1, len(lines)) if lines[i].strip() and not lines[i].strip().startswith("#")), None)
    return start + (code or 0)


def student_code(case):
    """`file:line in name` of the function a case exercises (the op named in
    its description), at the first line of your code in it."""
    words = [w.strip(":,()") for w in case.description.split()] + [QUESTION_CODE.get(case.question, "")]
    for word in filter(None, words):
        obj = _lookup(word)
        try:
            path = Path(inspect.getsourcefile(obj)).resolve()
            line = _code_line(*inspect.getsourcelines(obj))
        except (TypeError, OSError):
            continue
        if ROOT in path.parents:
            return f"{path.relative_to(ROOT).as_posix()}:{line} in {getattr(obj, '__qualname__', word)}"
    return "(not found in your files)"


def _from_json(node):
    if isinstance(node, dict):
        if set(node) == {"array", "dtype"}:
            return np.array(node["array"], dtype=node["dtype"])
        return {k: _from_json(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_from_json(v) for v in node]
    return node


def _failure(case, want, entry):
    """How your code fails one smaller input: smallest.VALUE, an exception's type, or None."""
    try:
        value = plain(calls.evaluate(ndl, entry))
    except NotImplementedError:
        return None, None
    except Exception as exc:  # noqa: BLE001  (your code's exception: a failure of its own kind)
        return type(exc).__name__, f"{type(exc).__name__}: {exc}"
    return (None if check(case, want, value).passed else smallest.VALUE), value


def smallest_line(case, how):
    """`Smallest failing input: ...` for a failing case, as the grader shows
    it: the grader's smaller inputs for it (hw1_cases/smaller.json,
    with the reference's values), the smallest on which your code fails
    the way the case did (else fails at all); "" when none does."""
    path = HERE / "hw1_cases" / "smaller.json"
    candidates = json.loads(path.read_text()).get(case.name, []) if path.is_file() else []
    results = []
    for c in candidates:
        want = _from_json(c["expected"])
        kind, got = _failure(case, want, c["entry"])
        results.append(((c, want, got), kind))
    picked = smallest.pick(results, how)
    if picked is None:
        return ""
    c, want, got = picked
    entry = c["entry"]
    inputs = [np.array(a["data"], dtype=a["dtype"]) for a in entry["inputs"]]
    out_grad = np.array(entry["out_grads"][0]["data"]) if entry["out_grads"] else None
    error = got if isinstance(got, str) else ""
    return smallest.public_line(c["call"], inputs, out_grad, want, None if error else got, error)


@functools.lru_cache(maxsize=1)
def _shipped_causes():
    return json.loads(CAUSES.read_text()) if CAUSES.is_file() else {"bugs": {}, "cases": {}}


def _known(case):
    """The known bugs' results on a public case (hw1_cases/causes.json: only
    those that differ from the reference's), as the shared rule reads them."""
    shipped = _shipped_causes()
    known = []
    for entry in shipped["cases"].get(case.value_key, []):
        result = (likely_cause.Result(True, _from_json(entry["value"])) if "value" in entry
                  else likely_cause.Result(False, error=entry["error"]))
        known += [likely_cause.Known(name, shipped["bugs"][name]["message"], result,
                                     shipped["bugs"][name]["shape_tells"]) for name in entry["bugs"]]
    return known


def _agree(case):
    return lambda want, got: check(case, want, got).passed


def _ruled_out(names):
    """Of the bugs `names`, those that break a public case your code passes
    (your code runs those cases too, as the grader's runs every case)."""
    passed = []
    for other in CASES:
        known = [k for k in _known(other) if k.name in names]
        if not known or other.check not in likely_cause.VALUE_CHECKS:
            continue
        ok, value = computed(other)
        want = expected_value(other)
        if ok and check(other, want, value).passed:
            passed.append((_agree(other), likely_cause.Result(True, want), known))
    return likely_cause.ruled_out(passed)


def cause_line(case, ok, value):
    """`Likely cause: ...` for a failing case, as the grader names it: the
    one known bug (hw1_cases/causes.json, run on these inputs) that gives
    your result; "" when none or several do."""
    known = _known(case)
    error = "" if ok else likely_cause.error_text(f"{type(value).__name__}: {value}")
    student = likely_cause.Result(ok, value if ok else None, error)
    if not known or not likely_cause.eligible(case, student):
        return ""
    reference = likely_cause.Result(True, expected_value(case))
    found = likely_cause.cause(_agree(case), student, reference, known, _ruled_out({k.name for k in known}))
    return likely_cause.PREFIX + found if found else ""


def advisory_outcome(lines):
    """An advisory case that does not pass: xfailed with its reason (pytest
    counts it apart from failures; conftest.py lists it at the end)."""
    __tracebackhide__ = True
    print("\n".join(lines))
    pytest.xfail("\n".join(lines))


def contract_line(case):
    if case.advisory:
        return f"beyond the assignment (no points): {BEYOND[case.contract]}"
    return f"contract: {CONTRACT[case.contract]}"


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_case(case, record_property):
    ok, value = computed(case)
    if not ok:
        place = where(value, case)
        record_property("where", place)  # for the annotation on your line in CI (see conftest.py)
        cause = "" if value is SIMPLE_ML_ERROR else cause_line(case, ok, value)
        record_property("cause", cause)
        smaller = "" if isinstance(value, NotImplementedError) or value is SIMPLE_ML_ERROR else \
            smallest_line(case, type(value).__name__)
        record_property("smallest", smaller)
        lines = [case.description, cause, smaller, contract_line(case), f"where: {place}"]
        if case.advisory and not isinstance(value, NotImplementedError):  # a stub stays N, as scored ones
            advisory_outcome([f"{case.description}: {type(value).__name__}: {value}", *filter(None, lines[1:])])
        print("\n".join(filter(None, lines)))
        raise value
    want = expected_value(case)
    verdict = check(case, want, value, lambda: read_test_set(ROOT / "data"))
    if not verdict.passed:
        record_property("where", student_code(case))
        cause = cause_line(case, ok, value)
        record_property("cause", cause)
        smaller = smallest_line(case, smallest.VALUE)
        record_property("smallest", smaller)
        lines = list(filter(None, [f"{case.description}: {verdict.message}", cause, smaller, contract_line(case),
                                   *shapes(want, value), f"where: {student_code(case)}"]))
        if case.advisory:
            advisory_outcome(lines)
        # No traceback: it would show this file, not yours; `where` names your code.
        pytest.fail("\n".join(lines), pytrace=False)


def shapes(want, value):
    """`expected:` and `got:` lines when they say something the verdict does
    not (two arrays: their shapes and dtypes); none for lists or dicts."""
    if not (isinstance(want, np.ndarray) and isinstance(value, np.ndarray)):
        return []
    return [f"expected: {describe(want)}", f"got:      {describe(value)}"]
