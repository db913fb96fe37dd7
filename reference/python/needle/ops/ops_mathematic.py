"""Operator implementations.

Each op has a `compute` on raw numpy arrays (the forward pass, Q1) and a
`gradient` built from needle ops (the backward pass, Q2), so that gradients
are Tensors in the graph and can be differentiated again.
"""
from numbers import Number
from typing import Optional

from ..autograd import NDArray, Op, Tensor, Value, TensorOp
from ..autograd import TensorTuple, TensorTupleOp
import numpy

# NOTE: we will import numpy as the array_api
# as the backend for our computations, this line will change in later homeworks
import numpy as array_api


def _as_scalar(value):
    """A Python number from a number, numpy scalar or one-element array.

    Scalars given as numpy values would otherwise upcast float32 tensors.
    """
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        if value.size != 1:
            raise ValueError(f"expected a scalar or a one-element array, got shape {value.shape}")
        return value.item()
    return value


class EWiseAdd(TensorOp):
    def compute(self, a: NDArray, b: NDArray):
        return a + b

    def gradient(self, out_grad: Tensor, node: Tensor):
        return out_grad, out_grad


def add(a, b):
    return EWiseAdd()(a, b)


class AddScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = _as_scalar(scalar)

    def compute(self, a: NDArray):
        return a + self.scalar

    def gradient(self, out_grad: Tensor, node: Tensor):
        return out_grad


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class EWiseMul(TensorOp):
    def compute(self, a: NDArray, b: NDArray):
        return a * b

    def gradient(self, out_grad: Tensor, node: Tensor):
        lhs, rhs = node.inputs
        return out_grad * rhs, out_grad * lhs


def multiply(a, b):
    return EWiseMul()(a, b)


class MulScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = _as_scalar(scalar)

    def compute(self, a: NDArray):
        return a * self.scalar

    def gradient(self, out_grad: Tensor, node: Tensor):
        return (out_grad * self.scalar,)


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


def _sum_to_shape(grad, shape):
    """Sum `grad` over the axes numpy broadcasting added or stretched, so
    that it has `shape` again (the adjoint of a broadcast)."""
    # Q2
    ### BEGIN YOUR SOLUTION
    shape = tuple(shape)
    if grad.shape == shape:
        return grad
    lead = len(grad.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return reshape(summation(grad, axes=axes), shape)
    ### END YOUR SOLUTION


class PowerScalar(TensorOp):
    """Op to raise a tensor to a scalar power, element-wise: the scalar an
    int, a float or a numpy scalar."""

    def __init__(self, scalar: Number):
        self.scalar = _as_scalar(scalar)

    def compute(self, a: NDArray) -> NDArray:
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.power(a, self.scalar)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        a = node.inputs[0]
        return out_grad * mul_scalar(power_scalar(a, self.scalar - 1), self.scalar)
        ### END YOUR SOLUTION


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)


class EWisePow(TensorOp):
    """Op to element-wise raise a tensor to a power."""

    def compute(self, a: NDArray, b: NDArray) -> NDArray:
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.power(a, b)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        a, b = node.inputs
        # Broadcast explicitly: the element-wise ops below then see equal
        # shapes, so their own gradients (second order) have the right shapes.
        if a.shape != node.shape:
            a = broadcast_to(a, node.shape)
        if b.shape != node.shape:
            b = broadcast_to(b, node.shape)
        grad_a = out_grad * b * power(a, b - 1)
        grad_b = out_grad * node * log(a)
        a_shape, b_shape = node.inputs[0].shape, node.inputs[1].shape
        return _sum_to_shape(grad_a, a_shape), _sum_to_shape(grad_b, b_shape)
        ### END YOUR SOLUTION


def power(a, b):
    return EWisePow()(a, b)


class EWiseDiv(TensorOp):
    """Op to element-wise divide two nodes."""

    def compute(self, a, b):
        # Q1
        ### BEGIN YOUR SOLUTION
        return a / b
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        a, b = node.inputs
        return out_grad / b, negate(out_grad * a / (b * b))
        ### END YOUR SOLUTION


def divide(a, b):
    return EWiseDiv()(a, b)


class DivScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = _as_scalar(scalar)

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return a / self.scalar
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return DivScalar(self.scalar)(out_grad)
        ### END YOUR SOLUTION


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class Transpose(TensorOp):
    """Swap two axes: the last two by default, else the two in `axes`."""

    def __init__(self, axes: Optional[tuple] = None):
        self.axes = axes

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        # (Methods rather than numpy functions: they skip a Python wrapper.)
        if self.axes is None:
            return a.swapaxes(-1, -2)
        return a.swapaxes(self.axes[0], self.axes[1])
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return transpose(out_grad, self.axes)
        ### END YOUR SOLUTION


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Reshape(TensorOp):
    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return a.reshape(self.shape)  # the method skips numpy's Python wrapper
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return reshape(out_grad, node.inputs[0].shape)
        ### END YOUR SOLUTION


def reshape(a, shape):
    return Reshape(shape)(a)


class BroadcastTo(TensorOp):
    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        if a.ndim > len(self.shape):
            return array_api.broadcast_to(a, self.shape)  # raises numpy's error
        # Filling a fresh array costs a third of numpy.broadcast_to, whose
        # Python wrapper dominates on the small arrays of training.
        out = array_api.empty(self.shape, dtype=a.dtype)
        out[...] = a
        return out
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return _sum_to_shape(out_grad, node.inputs[0].shape)
        ### END YOUR SOLUTION


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class Summation(TensorOp):
    """Sum over `axes`: None (all axes) or a tuple of axes."""

    def __init__(self, axes: Optional[tuple] = None):
        self.axes = axes

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        axes = self.axes
        if a.ndim and axes in ((a.ndim - 1,), (-1,)) and a.dtype.char in "fd":
            # A float32/64 sum over the last axis is a product with ones:
            # BLAS does it 1.5x faster than numpy's reduction on the short
            # rows of a batch of logits.
            ones = array_api.empty(a.shape[-1], dtype=a.dtype)
            ones.fill(1)  # numpy.ones, minus its Python wrapper
            return a @ ones
        # What ndarray.sum calls, minus a Python-level wrapper.
        return array_api.add.reduce(a, axis=axes)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        in_shape = node.inputs[0].shape
        if self.axes is None:
            return BroadcastTo(in_shape)(out_grad)  # a 0-d adjoint broadcasts as it is
        axes = self.axes if isinstance(self.axes, tuple) else (self.axes,)  # one int axis
        # Put back the summed axes with size 1, so that numpy broadcasting
        # lines the adjoint up with them.
        kept = list(in_shape)
        for axis in axes:
            kept[axis] = 1  # negative axes index the same list
        return BroadcastTo(in_shape)(Reshape(tuple(kept))(out_grad))
        ### END YOUR SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)


class MatMul(TensorOp):
    """Matrix product of 2-D matrices, or batched: equal batch dimensions,
    or one 2-D side applied to every matrix of the other."""

    def compute(self, a, b):
        # Q1
        ### BEGIN YOUR SOLUTION
        return a @ b
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        a, b = node.inputs
        batch = node.shape[:-2]
        adjoints = []
        for x, lhs, rhs in ((a, out_grad, Transpose()(b)), (b, Transpose()(a), out_grad)):
            if x.shape[:-2] != batch:
                # x was broadcast along batch dimensions: sum over them.
                adjoints.append(_sum_to_shape(matmul(lhs, rhs), x.shape))
            elif x.requires_grad:
                adjoints.append(MatMul()(lhs, rhs))
            else:
                # An input that needs no gradient (a data batch) still gets
                # its adjoint, but as a node computed only when its value is
                # read: training never reads it, and it costs a full-size matmul.
                lazy = Tensor.__new__(Tensor)
                lazy._init(MatMul(), [lhs, rhs])
                adjoints.append(lazy)
        return tuple(adjoints)
        ### END YOUR SOLUTION


def matmul(a, b):
    return MatMul()(a, b)


class Negate(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.negative(a)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return Negate()(out_grad)
        ### END YOUR SOLUTION


def negate(a):
    return Negate()(a)


class Log(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.log(a)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return EWiseDiv()(out_grad, node.inputs[0])
        ### END YOUR SOLUTION


def log(a):
    return Log()(a)


class Exp(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.exp(a)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        # exp is its own derivative. (EWiseMul()(a, b) is a * b minus the
        # operator's Python call: gradients on the training path call the
        # op classes directly.)
        return EWiseMul()(out_grad, node)
        ### END YOUR SOLUTION


def exp(a):
    return Exp()(a)


class ReLU(TensorOp):
    def compute(self, a):
        # Q6
        ### BEGIN YOUR SOLUTION
        return array_api.maximum(a, 0)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q6
        ### BEGIN YOUR SOLUTION
        # The mask is a constant: relu is piecewise linear. A boolean mask
        # multiplies as 0/1 in out_grad's dtype.
        return EWiseMul()(out_grad, Tensor.make_const(node.realize_cached_data() > 0))
        ### END YOUR SOLUTION


def relu(a):
    return ReLU()(a)
