"""Q2: gradients of every op, first order against the reference (which is
itself checked against central differences), and second order through our
own reverse pass (gradients must be built from needle ops)."""
import numpy as np

from .registry import table
from .util import numeric_gradients, positive, randn, reverse_walk, tensor_check


def first_order(ndl, op_name, arrays, seed, **kwargs):
    """The op's own gradient for a random out_grad, and a numeric one."""
    tensors = [ndl.Tensor(a) for a in arrays]
    out = tensor_check(ndl, getattr(ndl, op_name)(*tensors, **kwargs), f"ndl.{op_name}")
    out_grad = randn(seed, *out.shape)
    partials = out.op.gradient_as_tuple(ndl.Tensor(out_grad), out)
    if len(partials) != len(arrays):
        raise ValueError(f"{type(out.op).__name__}.gradient returned {len(partials)} "
                         f"gradients for {len(arrays)} inputs")
    analytic = [tensor_check(ndl, g, f"{type(out.op).__name__}.gradient").numpy() for g in partials]

    def forward(*xs):
        return getattr(ndl, op_name)(*[ndl.Tensor(x) for x in xs], **kwargs).numpy()

    return {"analytic": analytic, "numeric": numeric_gradients(forward, arrays, out_grad)}


def second_order(ndl, op_name, arrays, seed, **kwargs):
    """Differentiate each first-order gradient again, with respect to the
    op's inputs (Hessian-vector products) and to out_grad.

    A gradient computed with numpy (outside the graph) has nothing to
    differentiate through and comes out as zeros here. For linear ops the
    inputs' part is zero anyway; the out_grad part (the op's adjoint applied
    twice) is not, so it catches them too.
    """
    tensors = [ndl.Tensor(a) for a in arrays]
    out = tensor_check(ndl, getattr(ndl, op_name)(*tensors, **kwargs), f"ndl.{op_name}")
    out_grad = ndl.Tensor(randn(seed, *out.shape))
    first = reverse_walk(ndl, out, out_grad)
    leaves = tensors + [out_grad]
    results = []
    for k, x in enumerate(tensors):
        g = first.get(id(x))
        if g is None:
            raise ValueError(f"no gradient reached input {k} of ndl.{op_name}")
        second = reverse_walk(ndl, g, ndl.Tensor(randn(seed + 1 + k, *g.shape)))
        results.append([second[id(t)].numpy() if id(t) in second else np.zeros(t.shape)
                        for t in leaves])
    return results


def _first(name, description, op_name, arrays, seed, **kwargs):
    return (name, description,
            lambda ndl, sm: first_order(ndl, op_name, arrays, seed, **kwargs))


def _second(name, description, op_name, arrays, seed, **kwargs):
    return (name, description,
            lambda ndl, sm: second_order(ndl, op_name, arrays, seed, **kwargs))


VISIBLE = [
    _first("backward_divide", "EWiseDiv.gradient: (3,4) / (3,4)", "divide",
           [randn(101, 3, 4), positive(102, 3, 4)], 103),
    _first("backward_divide_scalar", "DivScalar.gradient: (3,4) / 2.5", "divide_scalar",
           [randn(104, 3, 4)], 105, scalar=2.5),
    _first("backward_power_scalar", "PowerScalar.gradient: (3,4) ** 3", "power_scalar",
           [randn(106, 3, 4)], 107, scalar=3),
    _first("backward_ewise_pow", "EWisePow.gradient: (2,3) ** (2,3), positive base", "power",
           [positive(108, 2, 3), randn(109, 2, 3)], 110),
    _first("backward_matmul_2d", "MatMul.gradient: (3,4) @ (4,2)", "matmul",
           [randn(111, 3, 4), randn(112, 4, 2)], 113),
    _first("backward_matmul_batched", "MatMul.gradient: (2,3,4) @ (2,4,2)", "matmul",
           [randn(114, 2, 3, 4), randn(115, 2, 4, 2)], 116),
    _first("backward_summation_all", "Summation.gradient: (3,4,2) over all axes", "summation",
           [randn(117, 3, 4, 2)], 118),
    _first("backward_summation_axis", "Summation.gradient: (3,4,2) over axis 1", "summation",
           [randn(119, 3, 4, 2)], 120, axes=1),
    _first("backward_broadcast_to_size1", "BroadcastTo.gradient: (3,1) -> (3,4)", "broadcast_to",
           [randn(121, 3, 1)], 122, shape=(3, 4)),
    _first("backward_reshape", "Reshape.gradient: (2,3,4) -> (6,4)", "reshape",
           [randn(123, 2, 3, 4)], 124, shape=(6, 4)),
    _first("backward_negate", "Negate.gradient: (3,4)", "negate", [randn(125, 3, 4)], 126),
    _first("backward_transpose_default", "Transpose.gradient: default axes on (2,3,4)", "transpose",
           [randn(127, 2, 3, 4)], 128),
    _first("backward_log", "Log.gradient: positive (3,4)", "log", [positive(129, 3, 4)], 130),
    _first("backward_exp", "Exp.gradient: (3,4)", "exp", [randn(131, 3, 4)], 132),
]

HIDDEN = [
    _first("backward_power_scalar_fraction", "PowerScalar.gradient: positive (2,5) ** 0.5",
           "power_scalar", [positive(133, 2, 5)], 134, scalar=0.5),
    _first("backward_ewise_pow_broadcast", "EWisePow.gradient: (2,3) ** (3,) broadcast", "power",
           [positive(135, 2, 3), randn(136, 3)], 137),
    _first("backward_matmul_broadcast_rhs", "MatMul.gradient: (6,3,4) @ (4,5), batch dims broadcast",
           "matmul", [randn(138, 6, 3, 4), randn(139, 4, 5)], 140),
    _first("backward_matmul_broadcast_lhs", "MatMul.gradient: (3,4) @ (2,4,5), batch dims broadcast",
           "matmul", [randn(141, 3, 4), randn(142, 2, 4, 5)], 143),
    _first("backward_matmul_4d", "MatMul.gradient: (3,1,2,4) @ (2,4,3), 4-D broadcast", "matmul",
           [randn(144, 3, 1, 2, 4), randn(145, 2, 4, 3)], 146),
    _first("backward_summation_tuple", "Summation.gradient: (3,4,2) over axes (0,2)", "summation",
           [randn(147, 3, 4, 2)], 148, axes=(0, 2)),
    _first("backward_summation_negative_axis", "Summation.gradient: (3,4,2) over axis -1", "summation",
           [randn(149, 3, 4, 2)], 150, axes=-1),
    _first("backward_broadcast_to_scalar", "BroadcastTo.gradient: () -> (3,2)", "broadcast_to",
           [np.array(0.7)], 151, shape=(3, 2)),
    _first("backward_broadcast_to_leading", "BroadcastTo.gradient: (3,) -> (2,3)", "broadcast_to",
           [randn(152, 3)], 153, shape=(2, 3)),
    _first("backward_broadcast_to_middle", "BroadcastTo.gradient: (2,1,3) -> (4,2,5,3)", "broadcast_to",
           [randn(154, 2, 1, 3)], 155, shape=(4, 2, 5, 3)),
    _first("backward_transpose_axes", "Transpose.gradient: axes=(0,2) on (2,3,4)", "transpose",
           [randn(156, 2, 3, 4)], 157, axes=(0, 2)),
    _first("backward_reshape_flat", "Reshape.gradient: (2,3,4) -> (24,)", "reshape",
           [randn(158, 2, 3, 4)], 159, shape=(24,)),
]

SECOND = [
    _second("backward_second_order_power_scalar", "gradient of PowerScalar.gradient: (3,2) ** 3",
            "power_scalar", [randn(160, 3, 2)], 161, scalar=3),
    _second("backward_second_order_divide", "gradient of EWiseDiv.gradient: (3,2) / (3,2)", "divide",
            [randn(162, 3, 2), positive(163, 3, 2)], 164),
    _second("backward_second_order_log", "gradient of Log.gradient: positive (4,)", "log",
            [positive(165, 4)], 166),
    _second("backward_second_order_exp", "gradient of Exp.gradient: (4,)", "exp", [randn(167, 4)], 168),
    _second("backward_second_order_matmul", "gradient of MatMul.gradient: (3,4) @ (4,2)", "matmul",
            [randn(169, 3, 4), randn(170, 4, 2)], 171),
    _second("backward_second_order_ewise_pow", "gradient of EWisePow.gradient: (2,3) ** (2,3)", "power",
            [positive(172, 2, 3), randn(173, 2, 3)], 174),
    _second("backward_second_order_divide_scalar", "gradient of DivScalar.gradient: (3,2) / 4",
            "divide_scalar", [randn(175, 3, 2)], 176, scalar=4.0),
    _second("backward_second_order_summation", "gradient of Summation.gradient: (3,4) over axis 0",
            "summation", [randn(177, 3, 4)], 178, axes=0),
    _second("backward_second_order_broadcast_to", "gradient of BroadcastTo.gradient: (3,1) -> (2,3,4)",
            "broadcast_to", [randn(179, 3, 1)], 180, shape=(2, 3, 4)),
    _second("backward_second_order_reshape", "gradient of Reshape.gradient: (2,6) -> (3,4)", "reshape",
            [randn(181, 2, 6)], 182, shape=(3, 4)),
    _second("backward_second_order_transpose", "gradient of Transpose.gradient: (2,3,4) default axes",
            "transpose", [randn(183, 2, 3, 4)], 184),
    _second("backward_second_order_negate", "gradient of Negate.gradient: (5,)", "negate",
            [randn(185, 5)], 186),
]

table("backward", globals(), VISIBLE, check="analytic")
table("backward", globals(), HIDDEN, check="analytic", hidden=True)
table("backward", globals(), SECOND, hidden=True)
