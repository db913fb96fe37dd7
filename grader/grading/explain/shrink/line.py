"""The `Smallest failing input:` line under a failing case (worded by
grader/shipped/smallest.py, which the handout's `make test` shares).

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

from grader.shipped import smallest
from grader.shipped.compare import HIDDEN

PREFIX = smallest.PREFIX
OP_NAMES = {
    "negate": "Negate",
    "log": "Log",
    "exp": "Exp",
    "relu": "ReLU",
    "power_scalar": "PowerScalar",
    "divide_scalar": "DivScalar",
    "add_scalar": "AddScalar",
    "mul_scalar": "MulScalar",
    "divide": "EWiseDiv",
    "power": "EWisePow",
    "add": "EWiseAdd",
    "multiply": "EWiseMul",
    "summation": "Summation",
    "broadcast_to": "BroadcastTo",
    "reshape": "Reshape",
    "transpose": "Transpose",
    "matmul": "MatMul",
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


def out_grad(candidate):
    """The out_grad the line shows (the first one), or None for a forward call."""
    grads = candidate.out_grads()
    return grads[0] if grads else None


def text(candidate, expected, got, secret: str) -> str:
    """The whole line; `expected` the reference's value, `got` the
    student's Outcome, `secret` the case's compare level."""
    if secret == HIDDEN:
        return smallest.hidden_line(call_text(candidate))
    error = "" if got.ok else got.problem.split(" (at ", 1)[0]
    return smallest.public_line(
        call_text(candidate), candidate.arrays(), out_grad(candidate), expected, got.value if got.ok else None, error
    )
