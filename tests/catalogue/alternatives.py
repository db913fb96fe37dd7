"""Correct submissions written differently from the reference: each must
score 100. They are applied on the canonical base (see canonical.py)."""
from dataclasses import dataclass

from . import canonical
from .build import AUTOGRAD, OPS, SIMPLE_ML, Body


@dataclass(frozen=True)
class Alternative:
    name: str
    why: str                 # what differs from the reference, and why it is still right
    edits: tuple
    gap: str = ""            # set when the grader wrongly takes points (xfail strict)


def alternative(name, why, *edits, gap=""):
    return Alternative(name, why, tuple(edits), gap)


# The course skeleton's reverse pass: every partial adjoint is a Tensor.
COURSE_REVERSE_PASS = """
for node in reverse_topo_order:
    {reached}node.grad = sum_node_list(node_to_output_grads_list[node])
    if node.op is None:
        continue
    for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(node.grad, node)):
        {skip}node_to_output_grads_list.setdefault(inp, []).append(partial)
"""
# (Was a wrong verdict, fixed in 36f94f4: the given EWiseMul.gradient returned
# None for constant factors, and this pass added None + None in the
# gradient-of-gradient cases.)


ALTERNATIVES = [
    alternative("topo_iterative_dfs", "find_topo_sort with an explicit stack, same post-order",
                Body(AUTOGRAD, "find_topo_sort", """
                    visited, order = set(), []
                    for root in node_list:
                        stack = [(root, iter(root.inputs))]
                        if root in visited:
                            continue
                        visited.add(root)
                        while stack:
                            node, pending = stack[-1]
                            for inp in pending:
                                if inp not in visited:
                                    visited.add(inp)
                                    stack.append((inp, iter(inp.inputs)))
                                    break
                            else:
                                stack.pop()
                                order.append(node)
                    return order
                    """)),
    alternative("topo_visited_list", "visited nodes kept in a list (identity comparison), course style",
                Body(AUTOGRAD, "find_topo_sort", """
                    visited, topo_order = [], []
                    for node in node_list:
                        topo_sort_dfs(node, visited, topo_order)
                    return topo_order
                    """),
                Body(AUTOGRAD, "topo_sort_dfs", """
                    if any(node is v for v in visited):
                        return
                    visited.append(node)
                    for inp in node.inputs:
                        topo_sort_dfs(inp, visited, topo_order)
                    topo_order.append(node)
                    """)),
    alternative("compute_gradient_dict_of_lists", "dict of lists, sum_node_list for every node, "
                "skipping the None partials the given EWiseMul.gradient returns",
                Body(AUTOGRAD, "compute_gradient_of_variables",
                     COURSE_REVERSE_PASS.format(
                         reached="if node not in node_to_output_grads_list:\n        continue\n    ",
                         skip="if partial is not None:\n            "))),
    alternative("compute_gradient_course_skeleton", "the course's reverse pass, word for word",
                Body(AUTOGRAD, "compute_gradient_of_variables", COURSE_REVERSE_PASS.format(reached="", skip=""))),
    alternative("divide_gradient_via_power_scalar", "EWiseDiv.gradient as out_grad * b^-1 and -out_grad * a * b^-2",
                Body(OPS, "EWiseDiv.gradient", """
                    a, b = node.inputs
                    return (out_grad * power_scalar(b, -1),
                            negate(out_grad * a * power_scalar(b, -2)))
                    """)),
    alternative("log_gradient_via_power_scalar", "Log.gradient as out_grad * x^-1",
                Body(OPS, "Log.gradient", "return out_grad * power_scalar(node.inputs[0], -1)")),
    alternative("exp_gradient_recomputes_exp", "Exp.gradient as out_grad * exp(x) (recomputed, still in the graph)",
                Body(OPS, "Exp.gradient", "return multiply(out_grad, exp(node.inputs[0]))")),
    alternative("summation_gradient_expand_dims", "Summation.gradient: reshape built from normalized, sorted axes",
                Body(OPS, "Summation.gradient", """
                    shape = node.inputs[0].shape
                    axes = range(len(shape)) if self.axes is None else (
                        [self.axes] if isinstance(self.axes, int) else list(self.axes))
                    axes = sorted(ax % len(shape) for ax in axes) if shape else []
                    kept = [1 if i in axes else n for i, n in enumerate(shape)]
                    return broadcast_to(reshape(out_grad, tuple(kept)), shape)
                    """)),
    alternative("matmul_gradient_explicit_batch_sum", "MatMul.gradient: full-size gradients, then an explicit "
                "sum over the broadcast batch dims one axis at a time",
                Body(OPS, "MatMul.gradient", """
                    a, b = node.inputs

                    def reduce_to(grad, shape):
                        while len(grad.shape) > len(shape):
                            grad = summation(grad, axes=0)
                        for axis, n in enumerate(shape):
                            if n == 1 and grad.shape[axis] != 1:
                                grad = reshape(summation(grad, axes=axis), grad.shape[:axis] + (1,) + grad.shape[axis + 1:])
                        return grad

                    return (reduce_to(matmul(out_grad, transpose(b)), a.shape),
                            reduce_to(matmul(transpose(a), out_grad), b.shape))
                    """)),
    alternative("transpose_via_permutation", "Transpose.compute with numpy.transpose and an explicit permutation",
                Body(OPS, "Transpose.compute", """
                    i, j = (-2, -1) if self.axes is None else self.axes
                    perm = list(range(a.ndim))
                    perm[i], perm[j] = perm[j], perm[i]
                    return array_api.transpose(a, perm)
                    """)),
    alternative("relu_gradient_cast_mask", "ReLU.gradient multiplies by (x > 0) cast to the gradient's dtype",
                Body(OPS, "ReLU.gradient", """
                    mask = (node.inputs[0].realize_cached_data() > 0).astype(out_grad.dtype)
                    return out_grad * Tensor(mask, requires_grad=False)
                    """)),
    alternative("softmax_course_style", "softmax_loss without the max shift, as in the course notebook",
                canonical.softmax("""
                    return (ndl.summation(ndl.log(ndl.summation(ndl.exp(Z), axes=(1,))))
                            - ndl.summation(Z * y_one_hot)) / Z.shape[0]
                    """)),
    alternative("one_hot_from_eye", "one-hot labels as rows of an identity matrix",
                canonical.nn_epoch(one_hot="y_one_hot = np.eye(num_classes, dtype=np.float32)[y_b]")),
    alternative("nn_epoch_float64_internals", "weights kept in float64 during the epoch, float32 returned",
                canonical.nn_epoch(
                    prepare="W1, W2, dtype = ndl.Tensor(W1.numpy().astype(np.float64)), "
                            "ndl.Tensor(W2.numpy().astype(np.float64)), W1.dtype",
                    one_hot=canonical.ONE_HOT.replace("np.float32", "np.float64"),
                    step=canonical.STEP + "\n    W1, W2 = (ndl.Tensor(W.numpy().astype(dtype)) for W in (W1, W2))"
                         " if stop >= X.shape[0] else (W1, W2)")),
    alternative("parse_mnist_labels_int8", "labels cast to np.int8, as the course's docstring says",
                Body(SIMPLE_ML, "parse_mnist", """
                    with gzip.open(label_filename) as f:
                        y = np.frombuffer(f.read()[8:], dtype=np.uint8).astype(np.int8)
                    with gzip.open(image_filesname) as f:
                        raw = np.frombuffer(f.read()[16:], dtype=np.uint8)
                    return raw.reshape(y.shape[0], -1).astype(np.float32) / 255, y
                    """)),
    alternative("parse_mnist_labels_int64", "labels as np.int64 (any integer dtype indexes the same)",
                Body(SIMPLE_ML, "parse_mnist", """
                    with gzip.open(label_filename) as f:
                        y = np.array(list(f.read()[8:]), dtype=np.int64)
                    with gzip.open(image_filesname) as f:
                        raw = np.frombuffer(f.read()[16:], dtype=np.uint8)
                    return raw.reshape(y.shape[0], -1).astype(np.float32) / 255, y
                    """)),
    alternative("parse_mnist_float64_then_cast", "pixels divided in float64, then cast to float32",
                Body(SIMPLE_ML, "parse_mnist", """
                    with gzip.open(label_filename) as f:
                        y = np.frombuffer(f.read()[8:], dtype=np.uint8)
                    with gzip.open(image_filesname) as f:
                        raw = np.frombuffer(f.read()[16:], dtype=np.uint8)
                    X = (raw.reshape(y.shape[0], -1) / 255.0).astype(np.float32)
                    return X, y
                    """)),
]
