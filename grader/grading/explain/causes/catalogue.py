"""Known bugs of hw1's gradients, each a textual edit of the reference and
the words a student acts on: the families every op's gradient may fall into
(families.py, derived per op), and the bugs only an op's own code makes
(wrong axes, wrong reduced shapes, a forward bug), listed here.

A message names the kind of mistake and the fix, never a value: it is shown
on hidden cases too (see diagnose.py). `shape_tells`: any gradient of this
bug's shape (when it is not the input's) has this cause, whatever its
values (a BroadcastTo adjoint of the output's shape was not summed back).
Several entries may share a message: they are ways of writing one bug.
"""

from dataclasses import dataclass

from grader.grading.explain.causes import families
from grader.grading.explain.causes.edits import OPS, Body

ASSIGNMENT = "hw1"  # whose reference the edits apply to
FORWARD, BACKWARD = "forward", "backward"


@dataclass(frozen=True)
class Mutant:
    name: str
    message: str  # the `Likely cause:` text
    edits: tuple
    questions: tuple = (BACKWARD,)  # the only questions whose cases it is run on
    shape_tells: bool = False
    cases: tuple = ()  # when given, only these of its questions' cases (a ReLU bug: not Q6's epochs)


def covers(assignment) -> bool:
    """The catalogue's edits are of hw1's reference: no other assignment has causes."""
    return assignment.name == ASSIGNMENT


def diagnosis(message: str) -> str:
    """A message's first part: the mistake, without the fix after its colon.
    The handout ships only these (its data is readable before any bug is
    made, and the fixes spell out derivatives students are asked to derive);
    the grader's reports give the whole message. Distinct messages keep
    distinct diagnoses (tests/handout/test_handout_causes.py)."""
    return message.split(": ", 1)[0]


def gradient(cls, code):
    return Body(OPS, f"{cls}.gradient", code)


def compute(cls, code):
    return Body(OPS, f"{cls}.compute", code)


NOT_SUMMED = families.NOT_SUMMED
LEFT_ALIGNED = (
    "your broadcast gradient sums the wrong axes: numpy broadcasting lines shapes up from the "
    "right and adds new axes at the front, so sum the leading axes and the stretched size-1 axes"
)
NO_RESHAPE = (
    "Summation.gradient broadcasts out_grad without reshaping it first: put the summed axes back "
    "with size 1 (reshape), then broadcast to the input's shape"
)
MATMUL_NO_BATCH_SUM = (
    "MatMul.gradient is not summed over the batch dimensions broadcasting added: the "
    "gradient of a 2-D side must be summed over the other side's batch axes to its own shape"
)
MATMUL_B_TRANSPOSED = "MatMul.gradient for b is transposed: it must be transpose(a) @ out_grad, which has b's shape"
# BroadcastTo's sum back to the input's shape, with shapes lined up from the
# left (the test catalogue plants the same bug).
SUM_TO_SHAPE_LEFT_ALIGNED = """
shape = tuple(node.inputs[0].shape)
if out_grad.shape == shape:
    return out_grad
axes = tuple(i for i in range(len(out_grad.shape))
             if i >= len(shape) or (shape[i] == 1 and out_grad.shape[i] != 1))
return reshape(summation(out_grad, axes=axes), shape)
"""

MUTANTS = (
    # ---- broadcasting and shapes
    Mutant("sum_to_shape_left_aligned", LEFT_ALIGNED, (gradient("BroadcastTo", SUM_TO_SHAPE_LEFT_ALIGNED),)),
    Mutant(
        "summation_no_reshape",
        NO_RESHAPE,
        (gradient("Summation", "return broadcast_to(out_grad, node.inputs[0].shape)"),),
    ),
    Mutant(
        "summation_mean",
        "Summation.gradient divides by the number of summed entries: that is the "
        "gradient of a mean; a sum's adjoint is out_grad broadcast back unchanged",
        (
            gradient(
                "Summation",
                """
        in_shape = node.inputs[0].shape
        axes = range(len(in_shape)) if self.axes is None else self.axes
        kept, count = list(in_shape), 1
        for axis in axes:
            kept[axis], count = 1, count * in_shape[axis]
        return broadcast_to(reshape(out_grad, tuple(kept)), in_shape) / count
        """,
            ),
        ),
    ),
    Mutant(
        "transpose_default_axes",
        "Transpose.gradient swaps the last two axes whatever axes were given: swap back the same axes (self.axes)",
        (gradient("Transpose", "return transpose(out_grad)"),),
    ),
    Mutant(
        "matmul_no_batch_sum",
        MATMUL_NO_BATCH_SUM,
        (
            gradient(
                "MatMul",
                """
        a, b = node.inputs
        return matmul(out_grad, transpose(b)), matmul(transpose(a), out_grad)
        """,
            ),
        ),
        shape_tells=True,
    ),
    Mutant(
        "matmul_a_no_transpose",
        "MatMul.gradient for a forgets a transpose: a's gradient is out_grad @ transpose(b)",
        (
            gradient(
                "MatMul",
                """
        a, b = node.inputs
        return matmul(out_grad, b), matmul(transpose(a), out_grad)
        """,
            ),
        ),
    ),
    Mutant(
        "matmul_b_no_transpose",
        "MatMul.gradient for b forgets a transpose: b's gradient is transpose(a) @ out_grad",
        (
            gradient(
                "MatMul",
                """
        a, b = node.inputs
        return matmul(out_grad, transpose(b)), matmul(a, out_grad)
        """,
            ),
        ),
    ),
    # the same bug reshaped to b's shape (as a sum back to the input's shape does)
    Mutant(
        "matmul_b_transposed_reshaped",
        MATMUL_B_TRANSPOSED,
        (
            gradient(
                "MatMul",
                """
        a, b = node.inputs
        return matmul(out_grad, transpose(b)), reshape(matmul(transpose(out_grad), a), b.shape)
        """,
            ),
        ),
    ),
    Mutant(
        "matmul_swapped",
        "MatMul.gradient multiplies in the wrong order: a's gradient is "
        "out_grad @ transpose(b) and b's is transpose(a) @ out_grad",
        (
            gradient(
                "MatMul",
                """
        a, b = node.inputs
        return matmul(transpose(b), out_grad), matmul(out_grad, transpose(a))
        """,
            ),
        ),
    ),
    # ---- powers
    Mutant(
        "power_scalar_not_lowered",
        "PowerScalar.gradient keeps the exponent: the derivative of x^n is n x^(n-1) (lower the exponent by one)",
        (
            gradient(
                "PowerScalar",
                """
        return out_grad * mul_scalar(power_scalar(node.inputs[0], self.scalar), self.scalar)
        """,
            ),
        ),
    ),
    Mutant(
        "ewise_pow_b_no_log",
        "EWisePow.gradient for the exponent b forgets log(a): the derivative of a^b in b is a^b log(a)",
        (
            gradient(
                "EWisePow",
                """
        a, b = node.inputs
        return out_grad * b * power(a, b - 1), out_grad * node
        """,
            ),
        ),
    ),
    Mutant(
        "ewise_pow_a_not_lowered",
        "EWisePow.gradient for the base a keeps the exponent: the derivative of a^b in a is b a^(b-1)",
        (
            gradient(
                "EWisePow",
                """
        a, b = node.inputs
        return out_grad * b * node, out_grad * node * log(a)
        """,
            ),
        ),
    ),
    # ---- forward bugs: named on Q1's cases; on Q2's they also match the
    # gradient bug of the same values, so Q2 gets no line (never a guess)
    Mutant(
        "divide_scalar_compute_product",
        "DivScalar.compute multiplies by the scalar: divide by it",
        (compute("DivScalar", "return a * self.scalar"),),
        questions=(FORWARD, BACKWARD),
    ),
    Mutant(
        "matmul_compute_dot",
        "MatMul.compute uses numpy.dot, which pairs the wrong axes of batched "
        "arrays: use numpy.matmul (the @ operator)",
        (compute("MatMul", "return array_api.dot(a, b)"),),
        questions=(FORWARD, BACKWARD),
    ),
    Mutant(
        "log_compute_base10",
        "Log.compute takes the base-10 logarithm: use the natural log (numpy.log)",
        (compute("Log", "return array_api.log10(a)"),),
        questions=(FORWARD, BACKWARD),
    ),
    Mutant(
        "transpose_compute_first_axes",
        "Transpose with no axes swaps the first two axes: by default it swaps the last two",
        (
            compute(
                "Transpose",
                """
        if self.axes is None:
            return array_api.swapaxes(a, 0, 1)
        return array_api.swapaxes(a, *self.axes)
        """,
            ),
        ),
        questions=(FORWARD, BACKWARD),
    ),
    Mutant(
        "transpose_compute_reverses",
        "Transpose with axes given reverses every axis: swap only the two axes given (numpy.swapaxes)",
        (
            compute(
                "Transpose",
                """
        if self.axes is None:
            return array_api.swapaxes(a, -1, -2)
        return array_api.transpose(a)
        """,
            ),
        ),
        questions=(FORWARD, BACKWARD),
    ),
    # ---- per op, per family of mistake (families.py): pass-through, sign, out_grad ignored, a factor,
    # transposed, swapped, detached from the graph (caught by the second-order cases)
    *families.derived(Mutant),
)
