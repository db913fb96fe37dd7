"""Core data structures of needle: graph nodes (Value, Tensor), operators
(Op) and reverse-mode automatic differentiation.

Read top to bottom: the Op interface, the Value node every tensor is, the
Tensor class with its operator sugar, and finally the graph walk that turns
a scalar output into gradients of every input.
"""
from functools import reduce
from operator import add
from typing import Dict, List, Optional, Tuple, Union

import numpy

from needle import init
from .backend_numpy import Device, all_devices, cpu

# needle evaluates eagerly: every op computes its result when it is created.
LAZY_MODE = False
TENSOR_COUNTER = 0

# The array type of the numpy backend.
import numpy as array_api
NDArray = numpy.ndarray


class Op:
    """An operator: computes on raw arrays, differentiates on Values."""

    def __call__(self, *args):
        raise NotImplementedError()

    def compute(self, *args: Tuple[NDArray]):
        """Compute the forward result from the inputs' raw arrays."""
        raise NotImplementedError()

    def gradient(self, out_grad: "Value", node: "Value") -> Union["Value", Tuple["Value"]]:
        """Partial adjoints of each input, given the adjoint of `node`.

        `node` is the output this op produced; `out_grad` has its shape.
        Returns one Value per input (a bare Value when there is one input).
        """
        raise NotImplementedError()

    def gradient_as_tuple(self, out_grad: "Value", node: "Value") -> Tuple["Value"]:
        """The gradient, always as a tuple."""
        output = self.gradient(out_grad, node)
        if isinstance(output, tuple):
            return output
        if isinstance(output, list):
            return tuple(output)
        return (output,)


class TensorOp(Op):
    """An op whose output is a Tensor."""

    def __call__(self, *args):
        return Tensor.make_from_op(self, args)


class TensorTupleOp(Op):
    """An op whose output is a tuple of Tensors."""

    def __call__(self, *args):
        return TensorTuple.make_from_op(self, args)


class Value:
    """A node of the computational graph."""

    op: Optional[Op]
    inputs: List["Value"]
    cached_data: NDArray
    requires_grad: bool

    def realize_cached_data(self):
        """The node's array, computed from its inputs on first use.

        Returns the very array the node holds (no copy).
        """
        if self.cached_data is None:
            self.cached_data = self.op.compute(*[x.realize_cached_data() for x in self.inputs])
        return self.cached_data

    def is_leaf(self):
        return self.op is None

    def __del__(self):
        # TENSOR_COUNTER counts the nodes alive: one more in _init, one less here.
        global TENSOR_COUNTER
        TENSOR_COUNTER -= 1

    def _init(self, op: Optional[Op], inputs: List["Tensor"], *, num_outputs: int = 1,
              cached_data: List[object] = None, requires_grad: Optional[bool] = None):
        global TENSOR_COUNTER
        TENSOR_COUNTER += 1
        if requires_grad is None:
            # A loop, not any(<generator>): this runs for every op in training.
            requires_grad = False
            for x in inputs:
                if x.requires_grad:
                    requires_grad = True
                    break
        self.op = op
        self.inputs = inputs
        self.num_outputs = num_outputs
        self.cached_data = cached_data
        self.requires_grad = requires_grad

    @classmethod
    def make_const(cls, data, *, requires_grad=False):
        """A leaf holding `data` as is."""
        value = cls.__new__(cls)
        value._init(None, [], cached_data=data, requires_grad=requires_grad)
        return value

    @classmethod
    def make_from_op(cls, op: Op, inputs: List["Value"]):
        """The node `op(*inputs)`; computed now unless LAZY_MODE."""
        value = cls.__new__(cls)
        value._init(op, inputs)
        if not LAZY_MODE:
            if not value.requires_grad:
                return value.detach()
            value.realize_cached_data()
        return value


class TensorTuple(Value):
    """A tuple of tensors produced by a TensorTupleOp (not nested).

    Not needed in hw1: its item and tuple ops come in later homeworks.
    """

    def __len__(self):
        return len(self.realize_cached_data())

    def __getitem__(self, index: int):
        return needle.ops.tuple_get_item(self, index)

    def tuple(self):
        return tuple(self[i] for i in range(len(self)))

    def __repr__(self):
        return "needle.TensorTuple" + str(self.tuple())

    def __str__(self):
        return repr(self)

    def __add__(self, other):
        """Element-wise sum of two tuples of the same length."""
        if not isinstance(other, TensorTuple) or len(other) != len(self):
            raise TypeError("a TensorTuple adds only to a TensorTuple of the same length")
        return needle.ops.make_tuple(*[self[i] + other[i] for i in range(len(self))])

    def detach(self):
        return TensorTuple.make_const(self.realize_cached_data())


class Tensor(Value):
    """An n-dimensional array that remembers how it was computed."""

    grad: "Tensor"

    def __init__(self, array, *, device: Optional[Device] = None, dtype=None,
                 requires_grad=True, **kwargs):
        if isinstance(array, Tensor):
            device = array.device if device is None else device
            dtype = array.dtype if dtype is None else dtype
            if device == array.device and dtype == array.dtype:
                cached_data = array.realize_cached_data()
            else:
                cached_data = Tensor._array_from_numpy(array.numpy(), device=device, dtype=dtype)
        else:
            device = device if device else cpu()
            cached_data = Tensor._array_from_numpy(array, device=device, dtype=dtype)
        self._init(None, [], cached_data=cached_data, requires_grad=requires_grad)

    @staticmethod
    def _array_from_numpy(numpy_array, device, dtype):
        # dtype=None keeps numpy's inferred dtype (Python floats give float64).
        return numpy.array(numpy_array, dtype=dtype)

    @staticmethod
    def make_from_op(op: Op, inputs: List["Value"]):
        # The hot path of every op in training, hence written out flat
        # rather than through _init and realize_cached_data.
        if LAZY_MODE:
            tensor = Tensor.__new__(Tensor)
            tensor._init(op, inputs)
            return tensor
        global TENSOR_COUNTER
        TENSOR_COUNTER += 1
        # Unrolled for one and two inputs: on the small arrays of a training
        # step, building a list to unpack costs as much as the op itself. An
        # input's array is read directly when it is there (a call less).
        if len(inputs) == 1:
            a = inputs[0].cached_data
            data = op.compute(inputs[0].realize_cached_data() if a is None else a)
        elif len(inputs) == 2:
            a, b = inputs[0].cached_data, inputs[1].cached_data
            if a is None or b is None:
                a, b = inputs[0].realize_cached_data(), inputs[1].realize_cached_data()
            data = op.compute(a, b)
        else:
            data = op.compute(*[x.realize_cached_data() for x in inputs])
        tensor = Tensor.__new__(Tensor)
        # Attributes are set in the same order as _init does, so that all
        # tensors share one attribute layout (a CPython dict optimisation).
        for x in inputs:
            if x.requires_grad:
                tensor.op, tensor.inputs = op, inputs
                break
        else:
            # Nothing will differentiate through it: keep the result only.
            tensor.op, tensor.inputs = None, []
        tensor.num_outputs = 1
        tensor.cached_data = data
        tensor.requires_grad = tensor.op is not None
        return tensor

    @staticmethod
    def make_const(data, requires_grad=False):
        # Flat, like make_from_op: constants are made in every training step.
        global TENSOR_COUNTER
        TENSOR_COUNTER += 1
        tensor = Tensor.__new__(Tensor)
        tensor.op, tensor.inputs, tensor.num_outputs = None, [], 1
        tensor.cached_data = data.realize_cached_data() if isinstance(data, Tensor) else data
        tensor.requires_grad = requires_grad
        return tensor

    @property
    def data(self):
        """A detached tensor sharing this tensor's array."""
        return self.detach()

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        if value.dtype != self.dtype:
            raise TypeError(f"Tensor.data: dtype {value.dtype} does not match {self.dtype}; "
                            "convert it first")
        self.cached_data = value.realize_cached_data()

    def detach(self):
        """A new leaf tensor with the same array and no history."""
        return Tensor.make_const(self.realize_cached_data())

    @property
    def shape(self):
        return self.realize_cached_data().shape

    @property
    def dtype(self):
        return self.realize_cached_data().dtype

    @property
    def device(self):
        return cpu()

    def backward(self, out_grad=None):
        """Set `.grad` of the input tensors this one depends on (see
        compute_gradient_of_variables)."""
        if out_grad is None:
            out_grad = init.ones(*self.shape, dtype=self.dtype, device=self.device)
        compute_gradient_of_variables(self, out_grad)

    def __repr__(self):
        return "needle.Tensor(" + str(self.realize_cached_data()) + ")"

    def __str__(self):
        return self.realize_cached_data().__str__()

    def numpy(self):
        return self.realize_cached_data()

    # Operator sugar: a Tensor operand makes the element-wise op, anything
    # else the scalar op.
    def __add__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseAdd()(self, other)
        return needle.ops.AddScalar(other)(self)

    def __mul__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseMul()(self, other)
        return needle.ops.MulScalar(other)(self)

    def __pow__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWisePow()(self, other)
        return needle.ops.PowerScalar(other)(self)

    def __sub__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseAdd()(self, needle.ops.Negate()(other))
        return needle.ops.AddScalar(-other)(self)

    def __truediv__(self, other):
        if isinstance(other, Tensor):
            return needle.ops.EWiseDiv()(self, other)
        return needle.ops.DivScalar(other)(self)

    def __matmul__(self, other):
        return needle.ops.MatMul()(self, other)

    def matmul(self, other):
        return needle.ops.MatMul()(self, other)

    def sum(self, axes=None):
        return needle.ops.Summation(axes)(self)

    def broadcast_to(self, shape):
        return needle.ops.BroadcastTo(shape)(self)

    def reshape(self, shape):
        return needle.ops.Reshape(shape)(self)

    def __neg__(self):
        return needle.ops.Negate()(self)

    def transpose(self, axes=None):
        return needle.ops.Transpose(axes)(self)

    __radd__ = __add__
    __rmul__ = __mul__


def compute_gradient_of_variables(output_tensor, out_grad):
    """Reverse-mode AD: every input tensor of the graph `output_tensor`
    depends on gets `.grad`, the sum of the adjoints of all paths to it.

    Walks the nodes in reverse topological order; a node's adjoint is the
    sum of the partial adjoints its consumers sent it, stored in its
    `.grad`, and it then sends one partial adjoint to each of its inputs.
    (The cases read `.grad` of the inputs; that of intermediate nodes earns
    no points.) The adjoints are built from needle ops, so they can be
    differentiated again (gradient of gradient).
    """
    # node -> the partial adjoints its consumers have sent so far. For a
    # non-scalar output, `out_grad` plays the role of the adjoint of the output
    # (ones for backward() means differentiating the sum of its entries).
    node_to_output_grads_list: Dict[Tensor, List[Tensor]] = {output_tensor: [out_grad]}

    # Every node comes after its inputs in topological order, so in reverse
    # order a node's adjoint is complete before it is passed on.
    reverse_topo_order = list(reversed(find_topo_sort([output_tensor])))

    # Q4
    ### BEGIN YOUR SOLUTION
    for node in reverse_topo_order:
        partials = node_to_output_grads_list[node]
        node.grad = partials[0] if len(partials) == 1 else sum_node_list(partials)
        if node.op is None:
            continue  # a leaf: nothing to pass on
        for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(node.grad, node)):
            node_to_output_grads_list.setdefault(inp, []).append(partial)
    ### END YOUR SOLUTION


def find_topo_sort(node_list: List[Value]) -> List[Value]:
    """All nodes the given nodes depend on, each after its inputs.

    The order is the post-order of a depth-first search from each node of
    `node_list` in turn, following `inputs` in their order: a node is
    appended once all of its inputs have been, and each node appears once.
    """
    # Q3
    ### BEGIN YOUR SOLUTION
    visited = set()
    topo_order = []
    for node in node_list:
        topo_sort_dfs(node, visited, topo_order)
    return topo_order
    ### END YOUR SOLUTION


def topo_sort_dfs(node, visited, topo_order):
    """Append `node` and, before it, its unvisited ancestors (post-order DFS)."""
    # Q3
    ### BEGIN YOUR SOLUTION
    if node in visited:
        return
    visited.add(node)
    for inp in node.inputs:
        topo_sort_dfs(inp, visited, topo_order)
    topo_order.append(node)
    ### END YOUR SOLUTION


##############################
####### Helper Methods #######
##############################


def sum_node_list(node_list):
    """Add the nodes with needle's `+` (Python's sum would add a needless 0 + first)."""
    return reduce(add, node_list)


import needle  # noqa: E402  (the ops module imports this one; resolve names at call time)
