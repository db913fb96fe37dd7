# Generated from grader/shipped/cases/backward.py by `make handout`; do not edit.
"""Q2: gradients of every op, first order against the reference (which is
itself checked against central differences), and second order through our
own reverse pass (gradients must be built from needle ops). One op call per
case; inputs beyond the contract (int axes, implicit broadcasting, size-1
batch dims) are advisory."""
import numpy as np

from .registry import case
from .util import EXACT, call_of, numeric_gradients, positive, randn, reverse_walk, tensor_check


def drawn(seed):
    """A case's out_grads: the k-th drawn from seed + k, in the shape asked."""
    return lambda k, shape: randn(seed + k, *shape)


def first_order(ndl, op_name, arrays, seed, **kwargs):
    """The op's own gradient for a random out_grad, and a numeric one."""
    return gradient_record(ndl, op_name, arrays, drawn(seed), **kwargs)


def gradient_record(ndl, op_name, arrays, out_grads, numeric=True, **kwargs):
    """{"analytic": the op's gradients for out_grads(0, out.shape), and, when
    `numeric`, "numeric": central differences of the forward (they check
    the reference, not the student)."""
    tensors = [ndl.Tensor(a) for a in arrays]
    out = tensor_check(ndl, getattr(ndl, op_name)(*tensors, **kwargs), f"ndl.{op_name}")
    out_grad = out_grads(0, out.shape)
    partials = out.op.gradient_as_tuple(ndl.Tensor(out_grad), out)
    if len(partials) != len(arrays):
        raise ValueError(f"{type(out.op).__name__}.gradient returned {len(partials)} "
                         f"gradients for {len(arrays)} inputs")
    analytic = [tensor_check(ndl, g, f"{type(out.op).__name__}.gradient").numpy() for g in partials]
    if not numeric:
        return {"analytic": analytic}

    def forward(*xs):
        return getattr(ndl, op_name)(*[ndl.Tensor(x) for x in xs], **kwargs).numpy()

    return {"analytic": analytic, "numeric": numeric_gradients(forward, arrays, out_grad)}


def second_order(ndl, op_name, arrays, seed, **kwargs):
    return second_order_record(ndl, op_name, arrays, drawn(seed), **kwargs)


def second_order_record(ndl, op_name, arrays, out_grads, **kwargs):
    """Differentiate each first-order gradient again, with respect to the
    op's inputs (Hessian-vector products) and to out_grad
    (out_grads(0, ...)); input k's gradient is weighted by out_grads(1 + k, ...).

    A gradient computed with numpy (outside the graph) has nothing to
    differentiate through and comes out as zeros here. For linear ops the
    inputs' part is zero anyway; the out_grad part (the op's adjoint applied
    twice) is not, so it catches them too.
    """
    tensors = [ndl.Tensor(a) for a in arrays]
    out = tensor_check(ndl, getattr(ndl, op_name)(*tensors, **kwargs), f"ndl.{op_name}")
    out_grad = ndl.Tensor(out_grads(0, out.shape))
    first = reverse_walk(ndl, out, out_grad)
    leaves = tensors + [out_grad]
    results = []
    for k, x in enumerate(tensors):
        g = first.get(id(x))
        if g is None:
            raise ValueError(f"no gradient reached input {k} of ndl.{op_name}")
        second = reverse_walk(ndl, g, ndl.Tensor(out_grads(1 + k, g.shape)))
        results.append([second[id(t)].numpy() if id(t) in second else np.zeros(t.shape)
                        for t in leaves])
    return results


def grad1(name, description, op_name, arrays, seed, hidden=False, beyond="", **kwargs):
    """A first-order case: the op's gradient at `arrays` for a random out_grad."""
    return case("backward", name, beyond or "gradient", description,
                lambda ndl, sm: first_order(ndl, op_name, arrays, seed, **kwargs),
                check="analytic", hidden=hidden, advisory=bool(beyond), exact=EXACT,
                call=call_of("grad1", op_name, arrays, kwargs))


def grad2(name, description, op_name, arrays, seed, hidden=True, **kwargs):
    """A second-order case: each gradient differentiated again."""
    return case("backward", name, "gradient_of_gradient", description,
                lambda ndl, sm: second_order(ndl, op_name, arrays, seed, **kwargs), hidden=hidden, exact=EXACT,
                call=call_of("grad2", op_name, arrays, kwargs))


CASES = [
    grad1("divide", "EWiseDiv.gradient: (3,4) / (3,4)", "divide", [randn(101, 3, 4), positive(102, 3, 4)], 103),
    grad1("divide_scalar", "DivScalar.gradient: (3,4) / 2.5", "divide_scalar", [randn(104, 3, 4)], 105,
          scalar=2.5),
    grad1("power_scalar", "PowerScalar.gradient: (3,4) ** 3", "power_scalar", [randn(106, 3, 4)], 107,
          scalar=3),
    grad1("ewise_pow", "EWisePow.gradient: (2,3) ** (2,3), positive base", "power",
          [positive(108, 2, 3), randn(109, 2, 3)], 110),
    grad1("matmul_2d", "MatMul.gradient: (3,4) @ (4,2)", "matmul", [randn(111, 3, 4), randn(112, 4, 2)], 113),
    grad1("matmul_batched", "MatMul.gradient: (2,3,4) @ (2,4,2), equal batch dims", "matmul",
          [randn(114, 2, 3, 4), randn(115, 2, 4, 2)], 116),
    grad1("matmul_batched_by_2d", "MatMul.gradient: (6,3,4) @ (4,5), a 2-D right side", "matmul",
          [randn(138, 6, 3, 4), randn(139, 4, 5)], 140),
    # Positive inputs: a sum drawn near 0 lets central differences round off below
    # the exact tolerance (a forged gradient passed it on one seed).
    grad1("summation_all", "Summation.gradient: (3,4,2) over all axes", "summation", [positive(117, 3, 4, 2)], 118),
    grad1("summation_one_axis", "Summation.gradient: (3,4,2) over axes=(1,)", "summation",
          [randn(119, 3, 4, 2)], 120, axes=(1,)),
    grad1("broadcast_to_size1", "BroadcastTo.gradient: (3,1) -> (3,4)", "broadcast_to", [randn(121, 3, 1)], 122,
          shape=(3, 4)),
    # A 0-d input of magnitude 32 to 128: central differences of x * sum(out_grad)
    # round off by about eps |x| sum|out_grad| / h, which must stay above `exact`.
    # The round-off is random: with x in [0.5, 2) it fell under `exact` (so
    # central differences passed for the gradient) on 0.6% of draws, with
    # x in [32, 128) on 0.007% (measured over 10^5 draws).
    grad1("broadcast_to_scalar", "BroadcastTo.gradient: () -> (3,2)", "broadcast_to",
          [np.asarray(64 * positive(191))], 151, shape=(3, 2)),
    grad1("broadcast_to_leading", "BroadcastTo.gradient: (3,) -> (2,3)", "broadcast_to", [randn(152, 3)], 153,
          shape=(2, 3)),
    grad1("reshape", "Reshape.gradient: (2,3,4) -> (6,4)", "reshape", [randn(123, 2, 3, 4)], 124, shape=(6, 4)),
    grad1("negate", "Negate.gradient: (3,4)", "negate", [randn(125, 3, 4)], 126),
    grad1("transpose_default", "Transpose.gradient: default axes on (2,3,4)", "transpose",
          [randn(127, 2, 3, 4)], 128),
    grad1("transpose_axes_4d", "Transpose.gradient: axes=(1,3) on (2,3,4,5)", "transpose",
          [randn(187, 2, 3, 4, 5)], 188, axes=(1, 3)),
    grad1("log", "Log.gradient: positive (3,4)", "log", [positive(129, 3, 4)], 130),
    grad1("exp", "Exp.gradient: (3,4)", "exp", [randn(131, 3, 4)], 132),
    grad2("second_order_log", "gradient of Log.gradient: positive (4,)", "log", [positive(165, 4)], 166,
          hidden=False),
    grad2("second_order_exp", "gradient of Exp.gradient: (4,)", "exp", [randn(167, 4)], 168, hidden=False),
    grad2("second_order_summation", "gradient of Summation.gradient: (3,4) over axes=(0,)", "summation",
          [randn(177, 3, 4)], 178, hidden=False, axes=(0,)),
    grad2("second_order_broadcast_to", "gradient of BroadcastTo.gradient: (3,1) -> (2,3,4)", "broadcast_to",
          [randn(179, 3, 1)], 180, hidden=False, shape=(2, 3, 4)),
    # Beyond the contract: reported, no points.
    grad1("summation_int_axis", "Summation.gradient: (3,4,2) over axes=1 (an int)", "summation",
          [randn(189, 3, 4, 2)], 190, beyond="int_axes", axes=1),
    grad1("summation_negative_axis", "Summation.gradient: (3,4,2) over axes=(-1,)", "summation",
          [randn(149, 3, 4, 2)], 150, beyond="negative_axes", axes=(-1,)),
    grad1("ewise_pow_broadcast", "EWisePow.gradient: (2,3) ** (3,), broadcast implicitly", "power",
          [positive(135, 2, 3), randn(136, 3)], 137, beyond="implicit_broadcast"),
    grad1("power_scalar_fraction", "PowerScalar.gradient: positive (2,5) ** 0.5", "power_scalar",
          [positive(133, 2, 5)], 134, beyond="fractional_power", scalar=0.5),
    grad1("matmul_size1_batch", "MatMul.gradient: (3,1,2,4) @ (2,4,3), a size-1 batch dim broadcast",
          "matmul", [randn(144, 3, 1, 2, 4), randn(145, 2, 4, 3)], 146, beyond="batch_size1_broadcast"),
]
