"""One function per check kind of the case registry (see cases/registry.py).

Each takes (case, expected, actual, drawn) as plain data and returns a
Verdict (`drawn`: the inputs came from a grading seed, so the message never
shows an expected value; see compare.secrecy); the test-error check also
takes a function giving the test set (X, y), from the assignment's case
registry.
"""

import numpy as np

from .compare import HIDDEN, PASS, PUBLIC, Verdict, compare_close, compare_dtypes, describe, got_part, secrecy


def check_analytic(case, expected, actual, drawn=False):
    """Backward cases return {"analytic": ..., "numeric": ...}: grade the
    analytic gradient; the numeric one only validates the reference."""
    if not isinstance(actual, dict) or "analytic" not in actual:
        return Verdict(
            False, f"expected the case's gradient record{got_part(f'a {describe(actual)}', secrecy(case, drawn))}"
        )
    return compare_close(case, expected["analytic"], actual["analytic"], drawn)


def check_topo(case, expected, actual, drawn=False):
    """The exact post-order DFS order; feedback names the broken property,
    judged on the reference's graph (labels are creation order)."""
    order = actual.get("order") if isinstance(actual, dict) else None
    if not isinstance(order, list) or not all(type(i) is int for i in order):
        got = got_part(describe(order), secrecy(case, drawn))
        return Verdict(False, f"expected a list of nodes from find_topo_sort{got}")
    want = expected["order"]
    if order == want:
        return PASS
    return Verdict(False, topo_problem(want, expected["inputs"], order, secrecy(case, drawn)))


TOPO_FUNCTION = "find_topo_sort"  # the function the topological-sort cases call, named in their feedback


def _node(label, inputs):
    """`node 3 (made from nodes 1, 2)` or `node 0 (a leaf)`, from the reference's graph."""
    made = inputs[label] if 0 <= label < len(inputs) else []
    if not made:
        return f"node {label} (a leaf)"
    return f"node {label} (made from node{'s' * (len(made) > 1)} {', '.join(map(str, made))})"


def _nodes(labels, inputs):
    return "; ".join(_node(label, inputs) for label in labels)


def topo_problem(want, inputs, order, secret=PUBLIC):
    """The property the order breaks, naming the function and the nodes
    (missing, repeated or out of order) as the reference's graph labels
    them; for a hidden case without nodes, counts or positions."""
    hidden = secret == HIDDEN
    numbering = " (nodes are numbered in the order the case created them)" if secret == PUBLIC else ""
    if -1 in order:
        return (
            f"{TOPO_FUNCTION} returned nodes that are not in the graph: the order must hold the nodes the "
            "given outputs depend on, and only those"
        )
    repeated = list(dict.fromkeys(label for i, label in enumerate(order) if label in order[:i]))
    if repeated:
        if hidden:
            return (
                f"{TOPO_FUNCTION} returned a node twice: each node must appear once "
                "(topo_sort_dfs must skip a node it has already visited)"
            )
        return (
            f"{TOPO_FUNCTION} returned {_nodes(repeated, inputs)} twice: each node must appear once "
            f"(topo_sort_dfs must skip a node it has already visited){numbering}"
        )
    missing = [label for label in want if label not in set(order)]
    if missing:
        if hidden:
            return (
                f"{TOPO_FUNCTION}: some nodes are missing from the order: every node the outputs depend "
                "on must appear, the outputs and the leaves included"
            )
        return (
            f"{TOPO_FUNCTION}: {len(missing)} node{'s' * (len(missing) > 1)} missing from the order "
            f"(it has {len(order)} nodes, the graph {len(want)}): {_nodes(missing, inputs)}{numbering}"
        )
    position = {label: i for i, label in enumerate(order)}
    for label in order:
        for inp in inputs[label]:
            if inp in position and position[inp] > position[label]:
                pair = (
                    "a node comes before one of its inputs"
                    if hidden
                    else f"{_node(label, inputs)} comes before its input {inp}"
                )
                return f"{TOPO_FUNCTION}: {pair}: not a topological order{numbering}"
    message = f"{TOPO_FUNCTION}: a valid topological order, but not the post-order DFS order (inputs visited in order)"
    if hidden:
        return message
    first = next(i for i, (a, b) in enumerate(zip(order, want)) if a != b)
    detail = f" (expected {want}, got {order})" if secret == PUBLIC else f" (got {order})"
    return f"{message}: first difference at position {first}{detail}{numbering}"


def check_weights(case, expected, actual, drawn=False):
    """Long float32 runs: each array as a whole, ||got - expected|| <= rtol
    ||expected|| (Frobenius). Correct operation orders drift apart entry by
    entry over hundreds of steps, but stay this close as matrices; a
    rescaled, shuffled or wrongly stepped run does not."""
    if not isinstance(actual, list) or len(actual) != len(expected):
        got = got_part(describe(actual), secrecy(case, drawn))
        return Verdict(False, f"expected a list of {len(expected)} arrays{got}")
    for i, (e, a) in enumerate(zip(expected, actual)):
        verdict = compare_close(case, e, a, drawn)  # structure, shape, kind and finiteness first
        if verdict.passed:
            continue
        if "wrong values" not in verdict.message:
            return verdict
        want = e.astype(np.float64)
        distance = np.linalg.norm(np.asarray(a, dtype=np.float64) - want) / max(np.linalg.norm(want), 1e-300)
        if not distance <= case.rtol:
            shown = "" if case.hidden else f": ||W - W_expected|| / ||W_expected|| = {distance:.2g}"
            return Verdict(
                False, f"[{i}]: weights differ from the reference's by more than {case.rtol:g} of their norm{shown}"
            )
    return PASS


START_DISTANCE = 0.5  # one epoch moves W1 by less; weights from other starting weights differ by more than 1


def check_test_error(case, expected, actual, test_set):
    """Error on the test set (MNIST's for hw1) of logits relu(X W1) W2, computed here."""
    if not (isinstance(actual, list) and len(actual) == 2 and all(isinstance(w, np.ndarray) for w in actual)):
        return Verdict(False, f"expected weights [W1, W2], got {describe(actual)}")
    # Shapes and kinds first: the student picks them, and X @ W1 of a shape
    # they chose could allocate gigabytes.
    for k, (want, got) in enumerate(zip(expected, actual)):
        if got.shape != want.shape or got.dtype.kind not in "biuf":
            return Verdict(
                False,
                f"W{k + 1} is an array of shape {got.shape} and dtype {got.dtype}; "
                f"expected shape {want.shape}, numbers: cannot evaluate",
            )
    with np.errstate(over="ignore"):  # float64 weights past float32's range (a diverged epoch): inf, refused below
        W1, W2 = [w.astype(np.float32) for w in actual]
    if not (np.all(np.isfinite(W1)) and np.all(np.isfinite(W2))):
        return Verdict(False, "weights contain nan or inf")
    # Good weights are easy to come by (any earlier run's); these must be
    # the ones trained from the starting weights this grading drew.
    for k, (want, got) in enumerate(zip(expected, (W1, W2))):
        want = want.astype(np.float64)
        distance = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)
        if not distance <= START_DISTANCE:
            return Verdict(
                False,
                f"W{k + 1} is not trained from the given starting weights: it differs from "
                f"the reference's by {distance:.2g} of its norm (> {START_DISTANCE:g})",
            )
    X, y = test_set()
    error = float(np.mean((np.maximum(X @ W1, 0) @ W2).argmax(axis=1) != y))
    if error <= case.threshold:
        return PASS
    return Verdict(False, f"test error {error:.4f} > {case.threshold} after one epoch")


def check_dtype(case, expected, actual, drawn=False):
    """The reference's dtypes exactly. A case checking its own value (not
    another case's) must also have the right values: dtypes alone are
    what any array of the right kind would pass."""
    if not case.source:
        verdict = compare_close(case, expected, actual, drawn)
        if not verdict.passed:
            return verdict
    return compare_dtypes(case, expected, actual)


CHECKERS = {
    "close": compare_close,
    "analytic": check_analytic,
    "topo": check_topo,
    "weights": check_weights,
    "dtype": check_dtype,
}


def check(case, expected, actual, test_set=None, drawn=False):
    """test_set: a function returning (X, y), for "test_error" cases;
    drawn: the inputs came from a grading seed."""
    if case.check == "test_error":
        if test_set is None:
            raise ValueError(f"case {case.name}: a test_error check needs the test set (read_test_set)")
        return check_test_error(case, expected, actual, test_set)
    return CHECKERS[case.check](case, expected, actual, drawn)
