# Generated from reference/python/needle/ops/ops_mathematic.py by `make handout`; students fill in this copy; instructors edit the source.
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
        raise NotImplementedError("Q1: PowerScalar.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: PowerScalar.gradient")
        ### END YOUR SOLUTION


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)


class EWisePow(TensorOp):
    """Op to element-wise raise a tensor to a power."""

    def compute(self, a: NDArray, b: NDArray) -> NDArray:
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: EWisePow.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: EWisePow.gradient")
        ### END YOUR SOLUTION


def power(a, b):
    return EWisePow()(a, b)


class EWiseDiv(TensorOp):
    """Op to element-wise divide two nodes."""

    def compute(self, a, b):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: EWiseDiv.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: EWiseDiv.gradient")
        ### END YOUR SOLUTION


def divide(a, b):
    return EWiseDiv()(a, b)


class DivScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: DivScalar.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: DivScalar.gradient")
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
        raise NotImplementedError("Q1: Transpose.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: Transpose.gradient")
        ### END YOUR SOLUTION


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Reshape(TensorOp):
    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: Reshape.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: Reshape.gradient")
        ### END YOUR SOLUTION


def reshape(a, shape):
    return Reshape(shape)(a)


class BroadcastTo(TensorOp):
    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: BroadcastTo.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: BroadcastTo.gradient")
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
        raise NotImplementedError("Q1: Summation.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: Summation.gradient")
        ### END YOUR SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)


class MatMul(TensorOp):
    """Matrix product of 2-D matrices, or batched: equal batch dimensions,
    or one 2-D side applied to every matrix of the other."""

    def compute(self, a, b):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: MatMul.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: MatMul.gradient")
        ### END YOUR SOLUTION


def matmul(a, b):
    return MatMul()(a, b)


class Negate(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: Negate.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: Negate.gradient")
        ### END YOUR SOLUTION


def negate(a):
    return Negate()(a)


class Log(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: Log.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: Log.gradient")
        ### END YOUR SOLUTION


def log(a):
    return Log()(a)


class Exp(TensorOp):
    def compute(self, a):
        # Q1
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q1: Exp.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q2
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q2: Exp.gradient")
        ### END YOUR SOLUTION


def exp(a):
    return Exp()(a)


class ReLU(TensorOp):
    def compute(self, a):
        # Q6
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q6: ReLU.compute")
        ### END YOUR SOLUTION

    def gradient(self, out_grad, node):
        # Q6
        ### BEGIN YOUR SOLUTION
        raise NotImplementedError("Q6: ReLU.gradient")
        ### END YOUR SOLUTION


def relu(a):
    return ReLU()(a)
