"""One function per check kind of the case registry (see cases/registry.py).

Each takes (case, expected, actual) as plain data and returns a Verdict;
the test-error check also takes a function giving the test set (X, y), from
the assignment's case registry.
"""
import numpy as np

from grader.grading.compare import PASS, Verdict, compare_close, compare_dtypes, describe


def check_analytic(case, expected, actual):
    """Backward cases return {"analytic": ..., "numeric": ...}: grade the
    analytic gradient; the numeric one only validates the reference."""
    if not isinstance(actual, dict) or "analytic" not in actual:
        return Verdict(False, f"expected the case's gradient record, got a {describe(actual)}")
    return compare_close(case, expected["analytic"], actual["analytic"])


def check_topo(case, expected, actual):
    """The exact post-order DFS order; feedback names the broken property,
    judged on the reference's graph (labels are creation order)."""
    order = actual.get("order") if isinstance(actual, dict) else None
    if not isinstance(order, list) or not all(type(i) is int for i in order):
        return Verdict(False, f"expected a list of nodes from find_topo_sort, got {describe(order)}")
    want = expected["order"]
    if order == want:
        return PASS
    return Verdict(False, topo_problem(want, expected["inputs"], order, case.hidden))


def topo_problem(want, inputs, order, hidden):
    if -1 in order:
        return "the order contains nodes that are not in the graph"
    seen = set()
    for label in order:
        if label in seen:
            return f"a node appears twice in the order (node {label})"
        seen.add(label)
    if seen != set(want):
        return f"the order has {len(order)} nodes, the graph {len(want)}: some nodes are missing"
    position = {label: i for i, label in enumerate(order)}
    for label in order:
        for inp in inputs[label]:
            if inp in position and position[inp] > position[label]:
                return f"node {label} comes before its input {inp}: not a topological order"
    first = next(i for i, (a, b) in enumerate(zip(order, want)) if a != b)
    detail = "" if hidden else f" (expected {want}, got {order})"
    return (f"a valid topological order, but not the post-order DFS order (inputs visited in "
            f"order): first difference at position {first}{detail}")


def check_norms(case, expected, actual):
    """Long float32 runs: compare the Frobenius norm of each array."""
    if not isinstance(actual, list) or len(actual) != len(expected):
        return Verdict(False, f"expected a list of {len(expected)} arrays, got {describe(actual)}")
    for i, (e, a) in enumerate(zip(expected, actual)):
        verdict = compare_close(case, e, a)  # structure, shape, kind and finiteness first
        if verdict.passed:
            continue
        if "wrong values" not in verdict.message:
            return verdict
        want, got = np.linalg.norm(e.astype(np.float64)), np.linalg.norm(np.asarray(a, dtype=np.float64))
        if abs(got - want) > case.rtol * want:
            shown = "" if case.hidden else f", expected {want:.6f}"
            return Verdict(False, f"[{i}]: norm {got:.6f}{shown}: relative difference "
                                  f"{abs(got - want) / want:.2g} > {case.rtol:g}")
    return PASS


def check_test_error(case, expected, actual, test_set):
    """Error on the test set (MNIST's for hw1) of logits relu(X W1) W2, computed here."""
    if not (isinstance(actual, list) and len(actual) == 2 and all(isinstance(w, np.ndarray) for w in actual)):
        return Verdict(False, f"expected weights [W1, W2], got {describe(actual)}")
    # Shapes and kinds first: the student picks them, and X @ W1 of a shape
    # they chose could allocate gigabytes.
    for k, (want, got) in enumerate(zip(expected, actual)):
        if got.shape != want.shape or got.dtype.kind not in "biuf":
            return Verdict(False, f"W{k + 1} is an array of shape {got.shape} and dtype {got.dtype}; "
                                  f"expected shape {want.shape}, numbers: cannot evaluate")
    X, y = test_set()
    with np.errstate(over="ignore"):  # float64 weights past float32's range (a diverged epoch): inf, refused below
        W1, W2 = [w.astype(np.float32) for w in actual]
    if not (np.all(np.isfinite(W1)) and np.all(np.isfinite(W2))):
        return Verdict(False, "weights contain nan or inf")
    error = float(np.mean((np.maximum(X @ W1, 0) @ W2).argmax(axis=1) != y))
    if error <= case.threshold:
        return PASS
    return Verdict(False, f"test error {error:.4f} > {case.threshold} after one epoch")


CHECKERS = {
    "close": lambda case, e, a: compare_close(case, e, a),
    "analytic": check_analytic,
    "topo": check_topo,
    "norms": check_norms,
    "dtype": compare_dtypes,
}


def check(case, expected, actual, test_set=None):
    """test_set: a function returning (X, y), for "test_error" cases."""
    if case.check == "test_error":
        if test_set is None:
            raise ValueError(f"case {case.name}: a test_error check needs the test set (read_test_set)")
        return check_test_error(case, expected, actual, test_set)
    return CHECKERS[case.check](case, expected, actual)
