"""The `Smallest failing input:` line's wording and its choice rule, for
both sides: the grader (grader/grading/explain/shrink/) and the handout's `make
test`, which ships a generated copy (tests/hw1/hw1_cases/smallest.py) and
applies it to the public cases' smaller inputs, whose reference values the
handout ships. numpy only, pure functions.

Choice: among a failing case's smaller inputs, smallest first, the first
that fails the way the case did (a wrong value for a wrong value, the same
exception type for an exception), else the first that fails at all.
"""

import numpy as np

PREFIX = "Smallest failing input: "
HIDDEN_NOTE = " (values are shown for public cases only)"
MAX_VALUE = 240  # characters of one shown value
VALUE = "value"  # how a case fails when its value is wrong (else: the exception's type)


def pick(failures, how):
    """failures: (candidate, how it fails or None) in size order; `how`:
    the case's failure. The candidate to show, or None."""
    alike = [c for c, kind in failures if kind == how]
    other = [c for c, kind in failures if kind]
    return (alike or other or [None])[0]


def value_text(value) -> str:
    """An array, a list of them or a number, on one line, capped."""
    if isinstance(value, np.ndarray):
        text = np.array2string(
            value, separator=", ", precision=6, suppress_small=True, max_line_width=10**6, threshold=64
        )
        text = " ".join(text.split())
    elif isinstance(value, list):
        text = "[" + ", ".join(value_text(v) for v in value) + "]"
    else:
        text = str(value)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "..."


def shown(value):
    """A gradient record as its analytic part; one input's gradient as that one array."""
    if isinstance(value, dict) and "analytic" in value:
        value = value["analytic"]
        if isinstance(value, list) and len(value) == 1:
            return value[0]
    return value


def public_line(call, inputs, out_grad, expected, got=None, error="") -> str:
    """call: "BroadcastTo.gradient (1,) -> (2,2)"; inputs and out_grad (or
    None) the arrays given; `got` the student's value, or `error` the
    exception it raised ("ValueError: ...")."""
    grad = f", out_grad {value_text(out_grad)}" if out_grad is not None else ""
    result = f"raised {error}" if error else value_text(shown(got))
    return (
        f"{PREFIX}{call}: inputs {', '.join(value_text(a) for a in inputs)}{grad}; "
        f"expected {value_text(shown(expected))}, got {result}"
    )


def hidden_line(call) -> str:
    return f"{PREFIX}{call}{HIDDEN_NOTE}"
