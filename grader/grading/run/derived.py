"""A first-order gradient earns its points only with evidence that it is a
needle expression the student derived, judged on the second-order cases of
the same op (registry Call kind "grad2"): a gradient computed outside the
graph (central or complex-step differences of the forward, anything in
numpy) has the right first-order values but is a constant to autodiff, so
everything its second-order case differentiates comes out zero where the
reference's does not. Then the first-order case fails too. A second-order
case wrong for another reason (a bug in another op its gradient uses) costs
only itself.

Pure functions of the case table and values already read.
"""

import numpy as np

ZERO = 1e-9  # of the reference's largest second-order entry: "nothing reached it"
UNEARNED = "a constant to autodiff"  # in the message of a case that loses its points here

FIRST, SECOND = "grad1", "grad2"


def evidence(cases) -> dict:
    """scored first-order case name -> the names of the second-order cases of its op."""
    calls = {case.name: getattr(case, "call", None) for case in cases}  # another assignment's Case may have none
    second = {}
    for case in cases:
        if calls[case.name] is not None and calls[case.name].kind == SECOND:
            second.setdefault(calls[case.name].op, []).append(case.name)
    return {
        case.name: tuple(second[calls[case.name].op])
        for case in cases
        if calls[case.name] is not None
        and calls[case.name].kind == FIRST
        and not case.advisory
        and calls[case.name].op in second
    }


def _arrays(value):
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _arrays(v)]
    return [np.asarray(value, dtype=np.float64)] if isinstance(value, (np.ndarray, int, float)) else [None]


def constant(expected, actual) -> bool:
    """Whether a second-order value is zero throughout where the reference's
    is not: the first-order gradient was a constant to autodiff."""
    want, got = _arrays(expected), _arrays(actual)
    if len(want) != len(got) or any(a is None or b is None for a, b in zip(want, got)):
        return False
    scale = max((float(np.max(np.abs(a))) for a in want if a.size), default=0.0)
    if not scale > 0:
        return False
    return all(b.size == 0 or float(np.max(np.abs(b))) <= ZERO * scale for b in got if np.all(np.isfinite(b)))


def unearned(case_name, constants: dict, pairs: dict) -> str:
    """ "" when case_name's points stand, else why not (its op's second-order
    case shows the gradient is a constant to autodiff). constants: second-order
    case name -> constant()."""
    found = [name for name in pairs.get(case_name, ()) if constants.get(name, False)]
    if not found:
        return ""
    return (
        f"values right, but the gradient is {UNEARNED} (not built from needle ops): "
        f"{', '.join(found)} differentiates it to zero, so this case earns no points"
    )
