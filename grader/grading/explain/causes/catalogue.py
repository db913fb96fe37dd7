"""Known bugs of hw1's gradients, each a textual edit of the reference and
the words a student acts on.

A message names the kind of mistake and the fix, never a value: it is shown
on hidden cases too (see diagnose.py). `shape_tells`: any gradient of this
bug's shape (when it is not the input's) has this cause, whatever its
values (a BroadcastTo adjoint of the output's shape was not summed back).
Several entries may share a message: they are ways of writing one bug.
"""
from dataclasses import dataclass

from grader.grading.explain.causes.edits import OPS, Append, Body

ASSIGNMENT = "hw1"      # whose reference the edits apply to
FORWARD, BACKWARD = "forward", "backward"


@dataclass(frozen=True)
class Mutant:
    name: str
    message: str          # the `Likely cause:` text
    edits: tuple
    questions: tuple = (BACKWARD,)  # the only questions whose cases it is run on
    shape_tells: bool = False


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


def numpy_gradient(cls):
    """`cls.gradient` computed as the reference does, then detached from the
    graph as numpy code wrapped in a Tensor is: its own gradient is zero."""
    return Append(OPS, f"""
        def _detached_{cls}(gradient):
            def detached(self, out_grad, node):
                grads = gradient(self, out_grad, node)
                if isinstance(grads, tuple):
                    return tuple(Tensor(g.numpy()) for g in grads)
                return Tensor(grads.numpy())
            return detached


        {cls}.gradient = _detached_{cls}({cls}.gradient)
        """)


NOT_SUMMED = ("your gradient is not summed over the axes that broadcasting added or stretched: "
              "BroadcastTo's adjoint must have the input's shape (sum over those axes, then reshape)")
LEFT_ALIGNED = ("your broadcast gradient sums the wrong axes: numpy broadcasting lines shapes up from the "
                "right and adds new axes at the front, so sum the leading axes and the stretched size-1 axes")
NO_RESHAPE = ("Summation.gradient broadcasts out_grad without reshaping it first: put the summed axes back "
              "with size 1 (reshape), then broadcast to the input's shape")
MATMUL_NO_BATCH_SUM = ("MatMul.gradient is not summed over the batch dimensions broadcasting added: the "
                       "gradient of a 2-D side must be summed over the other side's batch axes to its own shape")
MATMUL_B_TRANSPOSED = ("MatMul.gradient for b is transposed: it must be transpose(a) @ out_grad, "
                       "which has b's shape")
NUMPY = ("{op}.gradient is computed in numpy and wrapped in a new Tensor: build it from needle ops, so that "
         "the gradient can itself be differentiated (its gradient came out zero)")

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

NUMPY_OPS = ("Log", "Exp", "Summation", "BroadcastTo", "Reshape", "Transpose", "Negate", "DivScalar",
             "PowerScalar", "EWiseDiv", "EWisePow", "MatMul")

MUTANTS = (
    # ---- broadcasting and shapes
    Mutant("broadcast_identity", NOT_SUMMED, (gradient("BroadcastTo", "return out_grad"),), shape_tells=True),
    Mutant("sum_to_shape_left_aligned", LEFT_ALIGNED, (gradient("BroadcastTo", SUM_TO_SHAPE_LEFT_ALIGNED),)),
    Mutant("summation_no_reshape", NO_RESHAPE,
           (gradient("Summation", "return broadcast_to(out_grad, node.inputs[0].shape)"),)),
    Mutant("summation_identity", "Summation.gradient returns out_grad as it is: broadcast it back to the "
           "input's shape (after reshaping the summed axes to size 1)",
           (gradient("Summation", "return out_grad"),), shape_tells=True),
    Mutant("summation_mean", "Summation.gradient divides by the number of summed entries: that is the "
           "gradient of a mean; a sum's adjoint is out_grad broadcast back unchanged", (gradient("Summation", """
        in_shape = node.inputs[0].shape
        axes = range(len(in_shape)) if self.axes is None else self.axes
        kept, count = list(in_shape), 1
        for axis in axes:
            kept[axis], count = 1, count * in_shape[axis]
        return broadcast_to(reshape(out_grad, tuple(kept)), in_shape) / count
        """),)),
    Mutant("reshape_identity", "Reshape.gradient must reshape out_grad back to the input's shape",
           (gradient("Reshape", "return out_grad"),), shape_tells=True),
    Mutant("transpose_default_axes", "Transpose.gradient swaps the last two axes whatever axes were given: "
           "swap back the same axes (self.axes)", (gradient("Transpose", "return transpose(out_grad)"),)),
    Mutant("transpose_identity", "Transpose.gradient returns out_grad as it is: swap the same two axes back",
           (gradient("Transpose", "return out_grad"),), shape_tells=True),
    Mutant("matmul_no_batch_sum", MATMUL_NO_BATCH_SUM, (gradient("MatMul", """
        a, b = node.inputs
        return matmul(out_grad, transpose(b)), matmul(transpose(a), out_grad)
        """),), shape_tells=True),
    Mutant("matmul_b_transposed", MATMUL_B_TRANSPOSED, (gradient("MatMul", """
        a, b = node.inputs
        return matmul(out_grad, transpose(b)), matmul(transpose(out_grad), a)
        """),), shape_tells=True),
    # the same bug reshaped to b's shape (as a sum back to the input's shape does)
    Mutant("matmul_b_transposed_reshaped", MATMUL_B_TRANSPOSED, (gradient("MatMul", """
        a, b = node.inputs
        return matmul(out_grad, transpose(b)), reshape(matmul(transpose(out_grad), a), b.shape)
        """),)),
    Mutant("matmul_swapped", "MatMul.gradient multiplies in the wrong order: a's gradient is "
           "out_grad @ transpose(b) and b's is transpose(a) @ out_grad", (gradient("MatMul", """
        a, b = node.inputs
        return matmul(transpose(b), out_grad), matmul(out_grad, transpose(a))
        """),)),
    # ---- signs, identities, the chain rule
    Mutant("negate_identity", "Negate.gradient passes out_grad through unchanged: the derivative of -x is "
           "-1, so negate out_grad", (gradient("Negate", "return out_grad"),)),
    Mutant("log_sign", "Log.gradient has the wrong sign: the derivative of log(x) is +1/x",
           (gradient("Log", "return negate(out_grad / node.inputs[0])"),)),
    Mutant("log_product", "Log.gradient multiplies by x where it must divide: the derivative of log(x) is 1/x",
           (gradient("Log", "return out_grad * node.inputs[0]"),)),
    Mutant("log_no_out_grad", "Log.gradient ignores out_grad: multiply the local derivative 1/x by out_grad "
           "(the chain rule)", (gradient("Log", "return power_scalar(node.inputs[0], -1)"),)),
    Mutant("exp_of_input", "Exp.gradient multiplies out_grad by x: the derivative of exp(x) is exp(x) "
           "(the node's own value)", (gradient("Exp", "return out_grad * node.inputs[0]"),)),
    Mutant("exp_no_out_grad", "Exp.gradient ignores out_grad: multiply exp(x) by out_grad (the chain rule)",
           (gradient("Exp", "return exp(node.inputs[0])"),)),
    Mutant("divide_b_sign", "EWiseDiv.gradient for b has the wrong sign: the derivative of a/b in b is -a/b^2",
           (gradient("EWiseDiv", """
        a, b = node.inputs
        return out_grad / b, out_grad * a / (b * b)
        """),)),
    Mutant("divide_b_once", "EWiseDiv.gradient for b divides by b once: the derivative of a/b in b is "
           "-a/b^2 (divide by b twice)", (gradient("EWiseDiv", """
        a, b = node.inputs
        return out_grad / b, negate(out_grad * a / b)
        """),)),
    Mutant("divide_swapped", "EWiseDiv.gradient returns the two gradients in the wrong order: first a's "
           "(out_grad / b), then b's (-out_grad a / b^2)", (gradient("EWiseDiv", """
        a, b = node.inputs
        return negate(out_grad * a / (b * b)), out_grad / b
        """),)),
    Mutant("divide_scalar_product", "DivScalar.gradient multiplies by the scalar: the derivative of x / c "
           "is 1 / c, so divide out_grad by it", (gradient("DivScalar", "return mul_scalar(out_grad, self.scalar)"),)),
    Mutant("divide_scalar_identity", "DivScalar.gradient passes out_grad through: divide it by the scalar",
           (gradient("DivScalar", "return out_grad"),)),
    # ---- powers
    Mutant("power_scalar_not_lowered", "PowerScalar.gradient keeps the exponent: the derivative of x^n is "
           "n x^(n-1) (lower the exponent by one)", (gradient("PowerScalar", """
        return out_grad * mul_scalar(power_scalar(node.inputs[0], self.scalar), self.scalar)
        """),)),
    Mutant("power_scalar_no_factor", "PowerScalar.gradient forgets the factor n: the derivative of x^n is "
           "n x^(n-1)", (gradient("PowerScalar", "return out_grad * power_scalar(node.inputs[0], self.scalar - 1)"),)),
    Mutant("ewise_pow_b_no_log", "EWisePow.gradient for the exponent b forgets log(a): the derivative of a^b "
           "in b is a^b log(a)", (gradient("EWisePow", """
        a, b = node.inputs
        return out_grad * b * power(a, b - 1), out_grad * node
        """),)),
    Mutant("ewise_pow_a_not_lowered", "EWisePow.gradient for the base a keeps the exponent: the derivative "
           "of a^b in a is b a^(b-1)", (gradient("EWisePow", """
        a, b = node.inputs
        return out_grad * b * node, out_grad * node * log(a)
        """),)),
    # ---- forward bugs: named on Q1's cases; on Q2's they also match the
    # gradient bug of the same values, so Q2 gets no line (never a guess)
    Mutant("divide_scalar_compute_product", "DivScalar.compute multiplies by the scalar: divide by it",
           (compute("DivScalar", "return a * self.scalar"),), questions=(FORWARD, BACKWARD)),
    Mutant("matmul_compute_dot", "MatMul.compute uses numpy.dot, which pairs the wrong axes of batched "
           "arrays: use numpy.matmul (the @ operator)", (compute("MatMul", "return array_api.dot(a, b)"),),
           questions=(FORWARD, BACKWARD)),
    Mutant("log_compute_base10", "Log.compute takes the base-10 logarithm: use the natural log (numpy.log)",
           (compute("Log", "return array_api.log10(a)"),), questions=(FORWARD, BACKWARD)),
    Mutant("transpose_compute_first_axes", "Transpose with no axes swaps the first two axes: by default it "
           "swaps the last two", (compute("Transpose", """
        if self.axes is None:
            return array_api.swapaxes(a, 0, 1)
        return array_api.swapaxes(a, *self.axes)
        """),), questions=(FORWARD, BACKWARD)),
    Mutant("transpose_compute_reverses", "Transpose with axes given reverses every axis: swap only the two "
           "axes given (numpy.swapaxes)", (compute("Transpose", """
        if self.axes is None:
            return array_api.swapaxes(a, -1, -2)
        return array_api.transpose(a)
        """),), questions=(FORWARD, BACKWARD)),
    # ---- gradients outside the graph (caught by the second-order cases)
    *(Mutant(f"numpy_{op.lower()}", NUMPY.format(op=op), (numpy_gradient(op),)) for op in NUMPY_OPS),
)
