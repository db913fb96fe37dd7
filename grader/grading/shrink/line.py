"""The `Smallest failing input:` line under a failing case.

What it shows follows compare.py's levels. On a public case (graded on the
handout's inputs or on drawn ones) it shows the smaller call's inputs, its
out_grad, the reference's value and the student's: the candidates are new
inputs, fixed and not drawn from any seed, so their expected values say
nothing about the answers a grading seed scores. On a hidden case it shows
the op and the shapes and keywords of the call only, never a value, an
error message or a position: a hidden case is a blind check, and its
candidates' answers, fixed across submissions, would otherwise tell
repeated submissions what the reference computes on the hidden case's kind
of call. Shapes say no more than the case's description already does.
"""
import numpy as np

from grader.grading.compare import HIDDEN

PREFIX = "Smallest failing input: "
MAX_VALUE = 240   # characters of one shown value
OP_NAMES = {
    "negate": "Negate", "log": "Log", "exp": "Exp", "relu": "ReLU", "power_scalar": "PowerScalar",
    "divide_scalar": "DivScalar", "add_scalar": "AddScalar", "mul_scalar": "MulScalar", "divide": "EWiseDiv",
    "power": "EWisePow", "add": "EWiseAdd", "multiply": "EWiseMul", "summation": "Summation",
    "broadcast_to": "BroadcastTo", "reshape": "Reshape", "transpose": "Transpose", "matmul": "MatMul",
}
KIND_FORMS = {"forward": "{op}", "grad1": "{op}.gradient", "grad2": "gradient of {op}.gradient"}


def _shape(shape) -> str:
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def call_text(candidate) -> str:
    """`BroadcastTo.gradient (1,) -> (2,2)`: the op and the call's shapes and keywords."""
    op = KIND_FORMS[candidate.kind].format(op=OP_NAMES.get(candidate.op, candidate.op))
    kwargs = dict(candidate.kwargs)
    shapes = [_shape(s) for s in candidate.shapes]
    if candidate.op in ("broadcast_to", "reshape"):
        return f"{op} {shapes[0]} -> {_shape(kwargs['shape'])}"
    joined = " @ ".join(shapes) if candidate.op == "matmul" else ", ".join(shapes)
    extra = "".join(f" {k}={v}" for k, v in sorted(kwargs.items()))
    return f"{op} {joined}{extra}"


def value_text(value) -> str:
    """An array, a list of them or a number, on one line, capped."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, separator=", ", precision=6, suppress_small=True, max_line_width=10 ** 6,
                               threshold=64)
        text = " ".join(text.split())
    elif isinstance(value, dict):
        text = value_text(value.get("analytic", value))
    elif isinstance(value, list):
        text = "[" + ", ".join(value_text(v) for v in value) + "]"
    else:
        text = str(value)
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 3] + "..."


def _shown(value):
    """A first-order gradient of a one-input op as that one array."""
    if isinstance(value, dict) and "analytic" in value:
        value = value["analytic"]
        if isinstance(value, list) and len(value) == 1:
            return value[0]
    return value


def _got(outcome) -> str:
    if outcome.ok:
        return value_text(_shown(outcome.value))
    return "raised " + outcome.problem.split(" (at ", 1)[0]


def text(candidate, expected, got, secret: str) -> str:
    """The whole line; `expected` the reference's value, `got` the
    student's Outcome, `secret` the case's compare level."""
    call = call_text(candidate)
    if secret == HIDDEN:
        return f"{PREFIX}{call} (values are shown for public cases only)"
    inputs = ", ".join(value_text(a) for a in candidate.arrays())
    grads = candidate.out_grads()
    out_grad = f", out_grad {value_text(grads[0])}" if grads else ""
    return f"{PREFIX}{call}: inputs {inputs}{out_grad}; expected {value_text(_shown(expected))}, got {_got(got)}"
