"""Forward (compute) of every reference op against numpy, on many shapes:
0-d, 1-d, broadcasting, batched matmul with broadcast batch dimensions."""
import numpy as np
import pytest


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def positive(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(np.float32)


# name -> (needle function name, keyword arguments, numpy function, inputs)
CASES = {
    "add": ("add", {}, np.add, [normal((2, 3), 1), normal((2, 3), 2)]),
    "add_0d": ("add", {}, np.add, [normal((), 3), normal((), 4)]),
    "add_scalar": ("add_scalar", {"scalar": 1.5}, lambda a: a + np.float32(1.5), [normal((4,), 5)]),
    "multiply": ("multiply", {}, np.multiply, [normal((3,), 6), normal((3,), 7)]),
    "mul_scalar": ("mul_scalar", {"scalar": -2.0}, lambda a: a * np.float32(-2), [normal((2, 2), 8)]),
    "power_scalar_3": ("power_scalar", {"scalar": 3}, lambda a: a ** 3, [normal((2, 3), 9)]),
    "power_scalar_0": ("power_scalar", {"scalar": 0}, lambda a: a ** 0, [normal((3,), 10)]),
    "power_scalar_half": ("power_scalar", {"scalar": 0.5}, np.sqrt, [positive((2, 2), 11)]),
    "power_scalar_0d": ("power_scalar", {"scalar": 2}, np.square, [normal((), 12)]),
    "power": ("power", {}, np.power, [positive((2, 3), 13), normal((2, 3), 14)]),
    "power_broadcast_exponent": ("power", {}, np.power, [positive((2, 3), 15), normal((3,), 16)]),
    "power_broadcast_base": ("power", {}, np.power, [positive((3, 1), 17), normal((1, 4), 18)]),
    "power_0d_exponent": ("power", {}, np.power, [positive((4,), 19), normal((), 20)]),
    "divide": ("divide", {}, np.divide, [normal((2, 3), 21), positive((2, 3), 22)]),
    "divide_0d": ("divide", {}, np.divide, [normal((), 23), positive((), 24)]),
    "divide_scalar": ("divide_scalar", {"scalar": 4.0}, lambda a: a / np.float32(4), [normal((5,), 25)]),
    "matmul": ("matmul", {}, np.matmul, [normal((3, 4), 26), normal((4, 5), 27)]),
    "matmul_batched": ("matmul", {}, np.matmul, [normal((6, 3, 4), 28), normal((6, 4, 2), 29)]),
    "matmul_3d_2d": ("matmul", {}, np.matmul, [normal((2, 3, 4), 30), normal((4, 5), 31)]),
    "matmul_2d_3d": ("matmul", {}, np.matmul, [normal((3, 4), 32), normal((2, 4, 5), 33)]),
    "matmul_4d_2d": ("matmul", {}, np.matmul, [normal((2, 3, 4, 5), 34), normal((5, 2), 35)]),
    "matmul_2d_4d": ("matmul", {}, np.matmul, [normal((4, 5), 36), normal((2, 3, 5, 2), 37)]),
    "matmul_batch_dims_broadcast": ("matmul", {}, np.matmul, [normal((2, 1, 3, 4), 38), normal((5, 4, 2), 39)]),
    "summation_all": ("summation", {}, np.sum, [normal((2, 3, 4), 40)]),
    "summation_0d": ("summation", {}, np.sum, [normal((), 41)]),
    "summation_1d": ("summation", {"axes": 0}, lambda a: np.sum(a, axis=0), [normal((7,), 42)]),
    "summation_int": ("summation", {"axes": 1}, lambda a: np.sum(a, axis=1), [normal((2, 3, 4), 43)]),
    "summation_tuple": ("summation", {"axes": (0, 2)}, lambda a: np.sum(a, axis=(0, 2)), [normal((2, 3, 4), 44)]),
    "summation_negative": ("summation", {"axes": -1}, lambda a: np.sum(a, axis=-1), [normal((2, 3, 4), 45)]),
    "summation_negative_tuple": ("summation", {"axes": (-1, -3)}, lambda a: np.sum(a, axis=(-1, -3)),
                                 [normal((2, 3, 4), 46)]),
    "broadcast_from_0d": ("broadcast_to", {"shape": (2, 3)}, lambda a: np.broadcast_to(a, (2, 3)),
                          [normal((), 47)]),
    "broadcast_size1_axis": ("broadcast_to", {"shape": (3, 4)}, lambda a: np.broadcast_to(a, (3, 4)),
                             [normal((3, 1), 48)]),
    "broadcast_new_axes": ("broadcast_to", {"shape": (2, 3, 4)}, lambda a: np.broadcast_to(a, (2, 3, 4)),
                           [normal((3, 1), 49)]),
    "broadcast_1d": ("broadcast_to", {"shape": (5,)}, lambda a: np.broadcast_to(a, (5,)), [normal((1,), 50)]),
    "reshape": ("reshape", {"shape": (3, 2)}, lambda a: a.reshape(3, 2), [normal((2, 3), 51)]),
    "reshape_flat": ("reshape", {"shape": (24,)}, lambda a: a.reshape(24), [normal((2, 3, 4), 52)]),
    "reshape_0d_to_1d": ("reshape", {"shape": (1,)}, lambda a: a.reshape(1), [normal((), 53)]),
    "reshape_inferred": ("reshape", {"shape": (4, -1)}, lambda a: a.reshape(4, -1), [normal((2, 6), 54)]),
    "negate": ("negate", {}, np.negative, [normal((2, 3), 55)]),
    "negate_0d": ("negate", {}, np.negative, [normal((), 56)]),
    "transpose_2d": ("transpose", {}, lambda a: a.T, [normal((2, 3), 57)]),
    "transpose_default_3d": ("transpose", {}, lambda a: np.swapaxes(a, 1, 2), [normal((2, 3, 4), 58)]),
    "transpose_axes_01": ("transpose", {"axes": (0, 1)}, lambda a: np.swapaxes(a, 0, 1), [normal((2, 3, 4), 59)]),
    "transpose_axes_02": ("transpose", {"axes": (0, 2)}, lambda a: np.swapaxes(a, 0, 2), [normal((2, 3, 4), 60)]),
    "transpose_axes_negative": ("transpose", {"axes": (-1, 0)}, lambda a: np.swapaxes(a, -1, 0),
                                [normal((2, 3, 4), 61)]),
    "log": ("log", {}, np.log, [positive((2, 3), 62)]),
    "log_0d": ("log", {}, np.log, [positive((), 63)]),
    "exp": ("exp", {}, np.exp, [normal((3, 2), 64)]),
    "relu": ("relu", {}, lambda a: np.maximum(a, 0), [np.array([-2.0, -0.0, 0.0, 0.5, 3.0], np.float32)]),
    "relu_2d": ("relu", {}, lambda a: np.maximum(a, 0), [normal((4, 5), 65)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_numpy(ndl, name):
    function, kwargs, numpy_fn, arrays = CASES[name]
    out = getattr(ndl, function)(*[ndl.Tensor(a) for a in arrays], **kwargs)
    want = numpy_fn(*arrays)
    assert isinstance(out, ndl.Tensor)
    assert out.shape == want.shape
    assert out.dtype == np.float32, "float32 inputs must give a float32 result"
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op_name", ["DivScalar", "PowerScalar", "MulScalar", "AddScalar"])
@pytest.mark.parametrize("scalar", [np.float64(2.0), np.float32(2.0), np.array(2.0), np.array([2.0]),
                                    np.array([[2.0]]), 2, 2.0],
                         ids=["np.float64", "np.float32", "0d-array", "1-element-array", "1x1-array", "int", "float"])
def test_scalar_ops_take_numpy_scalars(ndl, op_name, scalar):
    """The values numpy gives; the scalar is stored as given, as in the
    course's AddScalar, so its numpy type may widen the result."""
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    out = getattr(ndl, op_name)(scalar)(ndl.Tensor(a))
    want = {"DivScalar": a / 2, "PowerScalar": a ** 2, "MulScalar": a * 2, "AddScalar": a + 2}[op_name]
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-7)
    if type(scalar) in (int, float, np.float32):
        assert out.dtype == np.float32, "a Python number or a float32 scalar keeps float32"


def test_operator_sugar_builds_the_same_ops(ndl):
    a, b = normal((2, 3), 70), positive((2, 3), 71)
    A, B = ndl.Tensor(a), ndl.Tensor(b)
    expectations = [
        (A + B, ndl.EWiseAdd, a + b), (A + 2.0, ndl.AddScalar, a + 2), (2.0 + A, ndl.AddScalar, a + 2),
        (A * B, ndl.EWiseMul, a * b), (3.0 * A, ndl.MulScalar, a * 3), (A - B, ndl.EWiseAdd, a - b),
        (A - 1.0, ndl.AddScalar, a - 1), (-A, ndl.Negate, -a),
        (A / B, ndl.EWiseDiv, a / b), (A / 2.0, ndl.DivScalar, a / 2), (B ** 2, ndl.PowerScalar, b ** 2),
        (B ** A, ndl.EWisePow, b ** a), (A @ B.transpose(), ndl.MatMul, a @ b.T),
        (A.matmul(B.transpose()), ndl.MatMul, a @ b.T), (A.sum(), ndl.Summation, a.sum()),
        (A.sum((1,)), ndl.Summation, a.sum(axis=1)), (A.reshape((3, 2)), ndl.Reshape, a.reshape(3, 2)),
        (A.broadcast_to((4, 2, 3)), ndl.BroadcastTo, np.broadcast_to(a, (4, 2, 3))),
        (A.transpose(), ndl.Transpose, a.T),
    ]
    for out, op_class, want in expectations:
        assert isinstance(out.op, op_class), f"{out.op} is not a {op_class.__name__}"
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-6)


def test_matmul_rejects_mismatched_inner_dimensions(ndl):
    with pytest.raises(ValueError):
        ndl.matmul(ndl.Tensor(normal((2, 3), 72)), ndl.Tensor(normal((4, 2), 73)))


@pytest.mark.parametrize("source, target", [((3,), (2,)), ((1, 3), (3,)), ((2, 3), (3, 3))])
def test_broadcast_to_an_incompatible_shape_raises_like_numpy(ndl, source, target):
    with pytest.raises(ValueError):
        np.broadcast_to(np.zeros(source), target)
    with pytest.raises(ValueError):
        ndl.broadcast_to(ndl.Tensor(np.zeros(source, np.float32)), target)

