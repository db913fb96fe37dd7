"""Q1: forward computations of every op (values and shapes). The given ops
(EWiseAdd, AddScalar, EWiseMul, MulScalar) earn no points of their own."""
import numpy as np

from .registry import table
from .util import positive, randn, tensor_check

F32 = np.float32


def _run(ndl, op_name, *arrays, **kwargs):
    tensors = [ndl.Tensor(a) for a in arrays]
    out = getattr(ndl, op_name)(*tensors, **kwargs)
    return tensor_check(ndl, out, f"ndl.{op_name}").numpy()


def _rows():
    return [
        ("forward_power_scalar", "PowerScalar: (3,4) float32 ** 3 and ** 0.5, and a 0-d input ** 2",
         lambda ndl, sm: [_run(ndl, "power_scalar", positive(7, 3, 4, dtype=F32), scalar=3),
                          _run(ndl, "power_scalar", positive(8, 3, 4, dtype=F32), scalar=0.5),
                          _run(ndl, "power_scalar", np.array(1.7), scalar=2)]),
        ("forward_power_scalar_numpy_scalar", "PowerScalar with np.int64(2) and a one-element array as exponent",
         lambda ndl, sm: [_run(ndl, "power_scalar", positive(9, 2, 5, dtype=F32), scalar=np.int64(2)),
                          _run(ndl, "power_scalar", positive(10, 2, 5, dtype=F32), scalar=np.array([3]))]),
        ("forward_ewise_pow", "EWisePow: (2,3) ** (2,3) and (2,3) ** (3,) broadcast, positive float64",
         lambda ndl, sm: [_run(ndl, "power", positive(11, 2, 3), randn(12, 2, 3)),
                          _run(ndl, "power", positive(13, 2, 3), randn(14, 3))]),
        ("forward_divide", "EWiseDiv: (3,4) / (3,4) float32 and 0-d / 0-d",
         lambda ndl, sm: [_run(ndl, "divide", randn(15, 3, 4, dtype=F32), positive(16, 3, 4, dtype=F32)),
                          _run(ndl, "divide", np.array(3.0), np.array(-4.0))]),
        ("forward_divide_scalar", "DivScalar: (2,5) float32 / 3.5, / np.float32(4), / one-element array",
         lambda ndl, sm: [_run(ndl, "divide_scalar", randn(17, 2, 5, dtype=F32), scalar=3.5),
                          _run(ndl, "divide_scalar", randn(18, 2, 5, dtype=F32), scalar=np.float32(4)),
                          _run(ndl, "divide_scalar", randn(19, 2, 5, dtype=F32), scalar=np.array([2.0]))]),
        ("forward_matmul_2d", "MatMul: (3,4) @ (4,5) float32 and (1,6) @ (6,1)",
         lambda ndl, sm: [_run(ndl, "matmul", randn(20, 3, 4, dtype=F32), randn(21, 4, 5, dtype=F32)),
                          _run(ndl, "matmul", randn(22, 1, 6), randn(23, 6, 1))]),
        ("forward_matmul_batched", "MatMul batched: (2,3,4) @ (2,4,5) and (2,2,3,4) @ (2,2,4,3)",
         lambda ndl, sm: [_run(ndl, "matmul", randn(24, 2, 3, 4), randn(25, 2, 4, 5)),
                          _run(ndl, "matmul", randn(26, 2, 2, 3, 4), randn(27, 2, 2, 4, 3))]),
        ("forward_matmul_broadcast", "MatMul broadcasting batch dims: (6,3,4) @ (4,5), (3,4) @ (2,4,5), (3,1,2,4) @ (2,4,3)",
         lambda ndl, sm: [_run(ndl, "matmul", randn(28, 6, 3, 4), randn(29, 4, 5)),
                          _run(ndl, "matmul", randn(30, 3, 4), randn(31, 2, 4, 5)),
                          _run(ndl, "matmul", randn(32, 3, 1, 2, 4), randn(33, 2, 4, 3))]),
        ("forward_summation", "Summation of (3,4,5) over None, axis 1, axes (0,2), axis -1, and of a 0-d input",
         lambda ndl, sm: [_run(ndl, "summation", randn(34, 3, 4, 5)),
                          _run(ndl, "summation", randn(35, 3, 4, 5), axes=1),
                          _run(ndl, "summation", randn(36, 3, 4, 5), axes=(0, 2)),
                          _run(ndl, "summation", randn(37, 3, 4, 5), axes=-1),
                          _run(ndl, "summation", np.array(2.5))]),
        ("forward_broadcast_to", "BroadcastTo: () -> (3,2), (3,1) -> (3,4), (1,3) -> (2,3), (3,) -> (2,3), (2,1,3) -> (2,4,3)",
         lambda ndl, sm: [_run(ndl, "broadcast_to", np.array(1.25), shape=(3, 2)),
                          _run(ndl, "broadcast_to", randn(38, 3, 1), shape=(3, 4)),
                          _run(ndl, "broadcast_to", randn(39, 1, 3), shape=(2, 3)),
                          _run(ndl, "broadcast_to", randn(40, 3), shape=(2, 3)),
                          _run(ndl, "broadcast_to", randn(41, 2, 1, 3), shape=(2, 4, 3))]),
        ("forward_reshape", "Reshape: (2,3,4) -> (6,4), (24,), (4,3,2); (1,) -> ()",
         lambda ndl, sm: [_run(ndl, "reshape", randn(42, 2, 3, 4), shape=(6, 4)),
                          _run(ndl, "reshape", randn(43, 2, 3, 4), shape=(24,)),
                          _run(ndl, "reshape", randn(44, 2, 3, 4), shape=(4, 3, 2)),
                          _run(ndl, "reshape", randn(45, 1), shape=())]),
        ("forward_negate", "Negate: (3,4) float32 and 0-d",
         lambda ndl, sm: [_run(ndl, "negate", randn(46, 3, 4, dtype=F32)), _run(ndl, "negate", np.array(-2.0))]),
        ("forward_transpose", "Transpose: default on (3,4) and (2,3,4) (last two axes); axes=(0,2) on (2,3,4); axes=(1,0) on (5,2)",
         lambda ndl, sm: [_run(ndl, "transpose", randn(47, 3, 4)),
                          _run(ndl, "transpose", randn(48, 2, 3, 4)),
                          _run(ndl, "transpose", randn(49, 2, 3, 4), axes=(0, 2)),
                          _run(ndl, "transpose", randn(50, 5, 2), axes=(1, 0))]),
        ("forward_log", "Log: positive (3,4) float32 and 0-d",
         lambda ndl, sm: [_run(ndl, "log", positive(51, 3, 4, dtype=F32)), _run(ndl, "log", np.array(3.0))]),
        ("forward_exp", "Exp: (3,4) float32 and 0-d",
         lambda ndl, sm: [_run(ndl, "exp", randn(52, 3, 4, dtype=F32)), _run(ndl, "exp", np.array(-1.5))]),
    ]


table("forward", globals(), _rows()[:7])
table("forward", globals(), _rows()[7:], hidden=True)
