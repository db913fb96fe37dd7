"""Operator implementations.

Each op has a `compute` on raw numpy arrays (the forward pass, Q1) and a
`gradient` built from needle ops (the backward pass, Q2), so that gradients
are Tensors in the graph and can be differentiated again.
"""
from numbers import Number
from typing import List, Optional, Tuple, Union

from ..autograd import NDArray, Op, Tensor, Value, TensorOp
from ..autograd import TensorTuple, TensorTupleOp
import numpy

# NOTE: we will import numpy as the array_api
# as the backend for our computations, this line will change in later homeworks
BACKEND = "np"
import numpy as array_api


class EWiseAdd(TensorOp):
    def compute(self, a: NDArray, b: NDArray):
        return a + b

    def gradient(self, out_grad: Tensor, node: Tensor):
        return out_grad, out_grad


def add(a, b):
    return EWiseAdd()(a, b)


class AddScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

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
        self.scalar = scalar

    def compute(self, a: NDArray):
        return a * self.scalar

    def gradient(self, out_grad: Tensor, node: Tensor):
        return (out_grad * self.scalar,)


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class PowerScalar(TensorOp):
    """Op raise a tensor to an (integer) power."""

    def __init__(self, scalar: int):
        self.scalar = scalar

    def compute(self, a: NDArray) -> NDArray:
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.power(a, self.scalar)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        a = node.inputs[0]
        return out_grad * self.scalar * power_scalar(a, self.scalar - 1)
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
        def unbroadcast(grad, shape):
            # numpy broadcasting adds axes at the front and stretches size-1
            # axes: the adjoint sums over both, then has the input's shape.
            lead = len(grad.shape) - len(shape)
            axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                              if n == 1 and grad.shape[lead + i] != 1)
            return reshape(summation(grad, axes=axes), shape) if axes else grad

        a, b = node.inputs
        # d(a^b)/da = b a^(b-1) and d(a^b)/db = a^b log(a), with a and b broadcast
        # to the output's shape first, then each gradient summed back to its input's.
        a_out, b_out = broadcast_to(a, node.shape), broadcast_to(b, node.shape)
        grad_a = out_grad * b_out * power(a_out, b_out - 1)
        grad_b = out_grad * node * log(a_out)
        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)
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
        return out_grad / b, -out_grad * a / (b * b)
        ### END YOUR SOLUTION


def divide(a, b):
    return EWiseDiv()(a, b)


class DivScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return a / self.scalar
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        return out_grad / self.scalar
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
        if self.axes is None:
            return array_api.swapaxes(a, -1, -2)
        return array_api.swapaxes(a, *self.axes)
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
        return a.reshape(self.shape)
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
        return array_api.broadcast_to(a, self.shape)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        # numpy broadcasting adds axes at the front and stretches size-1 axes:
        # the adjoint sums over both, then has the input's shape again.
        shape = node.inputs[0].shape
        lead = len(out_grad.shape) - len(shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                          if n == 1 and out_grad.shape[lead + i] != 1)
        return reshape(summation(out_grad, axes=axes), shape) if axes else out_grad
        ### END YOUR SOLUTION


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class Summation(TensorOp):
    """Sum over `axes`: None (all axes) or a tuple of axes; the forward also takes one int axis (`axes=1`)."""

    def __init__(self, axes: Optional[tuple] = None):
        self.axes = axes

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        return a.sum(axis=self.axes)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        shape = node.inputs[0].shape
        axes = range(len(shape)) if self.axes is None else self.axes
        if isinstance(axes, int):
            axes = (axes,)
        # Put the summed axes back with size 1, then broadcast to the input's shape.
        kept = list(shape)
        for axis in axes:
            kept[axis] = 1
        return broadcast_to(reshape(out_grad, tuple(kept)), shape)
        ### END YOUR SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)


class MatMul(TensorOp):
    """Matrix product of 2-D matrices, or batched: equal batch dimensions,
    or one 2-D side applied to every matrix of the other."""

    def compute(self, a, b):
        # Q1
        ### BEGIN YOUR SOLUTION
        return array_api.matmul(a, b)
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        def unbroadcast(grad, shape):
            # numpy broadcasting adds axes at the front and stretches size-1
            # axes: the adjoint sums over both, then has the input's shape.
            lead = len(grad.shape) - len(shape)
            axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                              if n == 1 and grad.shape[lead + i] != 1)
            return reshape(summation(grad, axes=axes), shape) if axes else grad

        def unevaluated(x, y):
            # The node x @ y, computed when first read, as in LAZY_MODE.
            product = Tensor.__new__(Tensor)
            product._init(MatMul(), [x, y])
            return product

        a, b = node.inputs
        # A side that needs no gradient (the data X of a training step) and
        # was not broadcast still gets its adjoint, but unevaluated: the
        # product, the largest of the backward pass, is computed only if
        # someone reads it, and training never does.
        later_a = not a.requires_grad and a.shape[:-2] == node.shape[:-2]
        later_b = not b.requires_grad and b.shape[:-2] == node.shape[:-2]
        grad_a = unevaluated(out_grad, transpose(b)) if later_a else matmul(out_grad, transpose(b))
        grad_b = unevaluated(transpose(a), out_grad) if later_b else matmul(transpose(a), out_grad)
        # A side with fewer batch dimensions was broadcast: sum back to its shape.
        return (grad_a if later_a else unbroadcast(grad_a, a.shape),
                grad_b if later_b else unbroadcast(grad_b, b.shape))
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
        return negate(out_grad)
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
        return out_grad / node.inputs[0]
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
        return out_grad * node  # exp is its own derivative
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
        # 1 where the input was positive, else 0: a constant, not part of the graph.
        mask = Tensor(node.numpy() > 0, dtype=out_grad.dtype, requires_grad=False)
        return out_grad * mask
        ### END YOUR SOLUTION


def relu(a):
    return ReLU()(a)
