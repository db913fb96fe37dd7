# Generated from grader/shipped/cases/forward.py by `make handout`; do not edit.
"""Q1: forward computations of every op, one op call per case. The given
ops (EWiseAdd, AddScalar, EWiseMul, MulScalar) earn no points of their own.

Inputs are chosen so that natural bugs and the right answer differ: no
square or symmetric shapes where an axis mix-up would go unseen, and
Transpose axes whose swap differs from reversing every axis.
"""
import numpy as np

from .registry import case
from .util import call_of, positive, randn, tensor_check

F32 = np.float32


def forward_value(ndl, op_name, arrays, kwargs):
    tensors = [ndl.Tensor(a) for a in arrays]
    out = getattr(ndl, op_name)(*tensors, **kwargs)
    return tensor_check(ndl, out, f"ndl.{op_name}").numpy()


def fwd(name, contract, description, op_name, *arrays, hidden=False, advisory=False, **kwargs):
    """A case computing `ndl.<op_name>(*arrays, **kwargs)`."""
    return case("forward", name, contract, description,
                lambda ndl, sm: forward_value(ndl, op_name, arrays, kwargs), hidden=hidden, advisory=advisory,
                call=call_of("forward", op_name, arrays, kwargs))


def width(name, description, source):
    """Advisory: a float32 computation stays float32."""
    return case("forward", name, "float_width", description, source=f"forward_{source}",
                check="dtype", advisory=True)


CASES = [
    fwd("power_scalar_int", "power_scalar", "PowerScalar: (3,4) float32 ** 3", "power_scalar",
        positive(7, 3, 4, dtype=F32), scalar=3),
    fwd("power_scalar_0d", "power_scalar", "PowerScalar: a 0-d input ** 2", "power_scalar",
        positive(56), scalar=2),
    fwd("power_scalar_numpy_int", "power_scalar", "PowerScalar: (2,5) float32 ** np.int64(2)",
        "power_scalar", positive(9, 2, 5, dtype=F32), scalar=np.int64(2)),
    fwd("ewise_pow", "ewise_pow", "EWisePow: (2,3) ** (2,3), positive float64 base", "power",
        positive(11, 2, 3), randn(12, 2, 3)),
    fwd("divide", "divide", "EWiseDiv: (3,4) / (3,4) float32", "divide",
        randn(15, 3, 4, dtype=F32), positive(16, 3, 4, dtype=F32)),
    fwd("divide_0d", "divide", "EWiseDiv: 0-d / 0-d", "divide", randn(57), -positive(58)),
    fwd("divide_scalar", "divide_scalar", "DivScalar: (2,5) float32 / 3.5", "divide_scalar",
        randn(17, 2, 5, dtype=F32), scalar=3.5),
    fwd("divide_scalar_numpy", "divide_scalar", "DivScalar: (2,5) float32 / np.float32(4)",
        "divide_scalar", randn(18, 2, 5, dtype=F32), scalar=np.float32(4)),
    fwd("matmul_2d", "matmul", "MatMul: (3,4) @ (4,5) float32", "matmul",
        randn(20, 3, 4, dtype=F32), randn(21, 4, 5, dtype=F32)),
    fwd("matmul_vectors", "matmul", "MatMul: (1,6) @ (6,1)", "matmul", randn(22, 1, 6), randn(23, 6, 1)),
    fwd("matmul_batched", "matmul", "MatMul: (2,3,4) @ (2,4,5), equal batch dims", "matmul",
        randn(24, 2, 3, 4), randn(25, 2, 4, 5)),
    fwd("matmul_batched_by_2d", "matmul", "MatMul: (6,3,4) @ (4,5), a 2-D right side", "matmul",
        randn(28, 6, 3, 4), randn(29, 4, 5)),
    fwd("summation_all", "summation", "Summation: (3,4,5) over all axes (axes=None)", "summation",
        randn(34, 3, 4, 5)),
    fwd("summation_tuple", "summation", "Summation: (3,4,5) over axes=(0, 2)", "summation",
        randn(36, 3, 4, 5), axes=(0, 2)),
    fwd("broadcast_to_scalar", "broadcast_to", "BroadcastTo: () -> (3,2)", "broadcast_to",
        randn(60), shape=(3, 2)),
    fwd("broadcast_to_column", "broadcast_to", "BroadcastTo: (3,1) -> (3,4)", "broadcast_to",
        randn(38, 3, 1), shape=(3, 4)),
    fwd("broadcast_to_new_axis", "broadcast_to", "BroadcastTo: (3,) -> (2,3), a new leading axis",
        "broadcast_to", randn(40, 3), shape=(2, 3)),
    fwd("reshape", "reshape", "Reshape: (2,3,4) -> (6,4)", "reshape", randn(42, 2, 3, 4), shape=(6, 4)),
    fwd("negate", "negate", "Negate: (3,4) float32", "negate", randn(46, 3, 4, dtype=F32)),
    fwd("transpose_default_2d", "transpose", "Transpose: default axes on (3,4)", "transpose",
        randn(47, 3, 4)),
    fwd("transpose_default_3d", "transpose", "Transpose: default axes on (2,3,4) (the last two)",
        "transpose", randn(48, 2, 3, 4)),
    fwd("transpose_axes_3d", "transpose", "Transpose: axes=(0,1) on (2,3,4)", "transpose",
        randn(49, 2, 3, 4), axes=(0, 1)),
    fwd("log", "log", "Log: positive (3,4) float32", "log", positive(51, 3, 4, dtype=F32)),
    fwd("exp", "exp", "Exp: (3,4) float32", "exp", randn(52, 3, 4, dtype=F32)),
    fwd("summation_int_axis", "summation_int_axis", "Summation: (3,4,5) over axes=1 (an int, as the course's "
        "tests pass it)", "summation", randn(55, 3, 4, 5), axes=1),
    # Beyond the contract: reported, no points.
    fwd("summation_negative_axis", "negative_axes", "Summation: (3,4,5) over axes=(-1,)", "summation",
        randn(37, 3, 4, 5), axes=(-1,), advisory=True),
    fwd("ewise_pow_broadcast", "implicit_broadcast", "EWisePow: (2,3) ** (3,), broadcast implicitly",
        "power", positive(13, 2, 3), randn(14, 3), advisory=True),
    fwd("matmul_size1_batch", "batch_size1_broadcast", "MatMul: (3,1,2,4) @ (2,4,3)", "matmul",
        randn(32, 3, 1, 2, 4), randn(33, 2, 4, 3), advisory=True),
    fwd("power_scalar_fraction", "fractional_power", "PowerScalar: (3,4) float32 ** 0.5", "power_scalar",
        positive(8, 3, 4, dtype=F32), scalar=0.5, advisory=True),
    fwd("power_scalar_array", "array_scalar", "PowerScalar: (2,5) float32 ** np.array([3])",
        "power_scalar", positive(10, 2, 5, dtype=F32), scalar=np.array([3]), advisory=True),
    fwd("divide_scalar_array", "array_scalar", "DivScalar: (2,5) float32 / np.array([2.0])",
        "divide_scalar", randn(19, 2, 5, dtype=F32), scalar=np.array([2.0]), advisory=True),
    width("power_scalar_float32", "PowerScalar of float32 ** 3 stays float32", "power_scalar_int"),
    width("divide_scalar_float32", "DivScalar of float32 / 3.5 stays float32", "divide_scalar"),
    width("log_float32", "Log of float32 stays float32", "log"),
]
