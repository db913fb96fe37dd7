"""Realistic buggy submissions: the canonical base (reference + canonical
simple_ml bodies) with one bug each, and the exact set of questions on
which the grader must take points away. On every other question the mutant
must keep full marks.

Why each set is what it is (which cases reach the bug):
- Q1 forward: only `compute` methods.
- Q2 backward: op forward + gradient, and the gradient of the gradient
  through the cases' own reverse pass (ops used inside gradients count).
- Q3/Q4: graphs of the given ops only; Q4 calls the submission's
  find_topo_sort, so topo bugs that break the reverse order reach Q4.
- Q5: parse_mnist, and the canonical softmax (exp, log, summation,
  negate, broadcast_to, divide_scalar) differentiated by the cases' own
  reverse pass (Q2 gradients, not Q3/Q4).
- Q6: ReLU, and nn_epoch through everything: matmul (2-D), relu,
  softmax, find_topo_sort, compute_gradient_of_variables.
"""
from dataclasses import dataclass

from grader.grading.explain.causes.catalogue import SUM_TO_SHAPE_LEFT_ALIGNED

from . import canonical
from .build import AUTOGRAD, OPS, SIMPLE_ML, Body

F, B, T, C, S, N = ("forward", "backward", "topo_sort", "compute_gradient",
                    "softmax_loss_ndl", "nn_epoch_ndl")


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str                 # what a student got wrong
    edits: tuple
    loses: frozenset         # questions that must lose points
    gap: str = ""            # set when the cases miss the bug (xfail strict)
    reported_by: frozenset = frozenset()  # advisory cases that must fail (no points lost)


def mutant(name, bug, loses, *edits, gap="", reported_by=()):
    return Mutant(name, bug, tuple(edits), frozenset(loses), gap, frozenset(reported_by))


def ops(function, code):
    return Body(OPS, function, code)


def autograd(function, code):
    return Body(AUTOGRAD, function, code)


TOPO_DFS = """
if node in visited:
    return
visited.add(node)
for inp in {inputs}:
    topo_sort_dfs(inp, visited, topo_order)
topo_order.append(node)
"""

COMPUTE_GRADIENT = """
grads = {{output_tensor: [out_grad]}}
for node in {order}:
    if node not in grads:
        continue
    node.grad = {combine}
    if node.op is None:
        continue
    for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(node.grad, node)):
        if partial is not None:
            grads.setdefault(inp, []).append(partial)
"""
SUM = "sum_node_list(grads[node])"
REVERSED = "reverse_topo_order"

PARSE = """
with gzip.open(image_filesname, "rb") as f:
    raw = f.read()
n = struct.unpack(">I", raw[4:8])[0]
X = np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, 784){convert}
with gzip.open(label_filename, "rb") as f:
    y = np.frombuffer(f.read(), dtype=np.uint8, offset=8){labels}
return X, y
"""
PARSE_OK = dict(convert=".astype(np.float32) / np.float32(255)", labels="")


def parse(**changes):
    return Body(SIMPLE_ML, "parse_mnist", PARSE.format(**{**PARSE_OK, **changes}))


MUTANTS = [
    # ---------------------------------------------------------------- Q1
    mutant("divide_scalar_multiplies", "DivScalar.compute multiplies by the scalar", {F, B, S, N},
           ops("DivScalar.compute", "return a * self.scalar")),
    mutant("matmul_compute_dot", "MatMul.compute with numpy.dot (wrong for batches)", {F, B},
           ops("MatMul.compute", "return array_api.dot(a, b)")),
    # Training needs only Log.gradient, not Log.compute: nn_epoch is unaffected.
    mutant("log_compute_base10", "Log.compute with log10 (EWisePow.gradient uses log)", {F, B, S},
           ops("Log.compute", "return array_api.log10(a)")),
    mutant("transpose_default_first_axes", "Transpose with no axes swaps the first two axes", {F, B},
           ops("Transpose.compute", """
               if self.axes is None:
                   return array_api.swapaxes(a, 0, 1)
               return array_api.swapaxes(a, *self.axes)
               """)),
    # ---------------------------------------------------------------- Q2
    mutant("matmul_gradient_off_by_transpose", "MatMul.gradient: grad_b = out_grad^T a", {B, N},
           ops("MatMul.gradient", """
               a, b = node.inputs
               return matmul(out_grad, transpose(b)), reshape(matmul(transpose(out_grad), a), b.shape)
               """)),
    mutant("matmul_gradient_ignores_batch_broadcast", "MatMul.gradient never sums broadcast batch dims", {B},
           ops("MatMul.gradient", """
               a, b = node.inputs
               return matmul(out_grad, transpose(b)), matmul(transpose(a), out_grad)
               """)),
    mutant("summation_gradient_forgets_reshape", "Summation.gradient broadcasts without reshaping", {B, S, N},
           ops("Summation.gradient", "return broadcast_to(out_grad, node.inputs[0].shape)")),
    mutant("broadcast_gradient_sums_wrong_axes", "BroadcastTo.gradient aligns shapes from the left", {B},
           ops("BroadcastTo.gradient", SUM_TO_SHAPE_LEFT_ALIGNED)),
    mutant("broadcast_gradient_no_sum", "BroadcastTo.gradient returns out_grad as it is", {B},
           ops("BroadcastTo.gradient", "return out_grad")),
    mutant("reshape_gradient_wrong_shape", "Reshape.gradient reshapes to the output's shape", {B},
           ops("Reshape.gradient", "return reshape(out_grad, node.shape)")),
    mutant("log_gradient_sign", "Log.gradient: -out_grad / x", {B, S, N},
           ops("Log.gradient", "return negate(out_grad / node.inputs[0])")),
    mutant("log_gradient_numpy", "Log.gradient computed in numpy and wrapped: no second order", {B},
           ops("Log.gradient", "return Tensor(out_grad.numpy() / node.inputs[0].numpy())")),
    mutant("exp_gradient_numpy", "Exp.gradient computed in numpy and wrapped: no second order", {B},
           ops("Exp.gradient", "return Tensor(out_grad.numpy() * node.numpy())")),
    # A gradient computed in numpy is caught by the second-order cases: for
    # the linear ops, by differentiating it with respect to out_grad.
    mutant("summation_gradient_numpy", "Summation.gradient computed in numpy and wrapped: no second order", {B},
           ops("Summation.gradient", """
               shape = node.inputs[0].shape
               axes = range(len(shape)) if self.axes is None else (
                   [self.axes] if isinstance(self.axes, int) else self.axes)
               grad = out_grad.numpy()
               if shape:
                   grad = numpy.expand_dims(grad, tuple(sorted(a % len(shape) for a in axes)))
               return Tensor(numpy.broadcast_to(grad, shape).copy(), requires_grad=False)
               """)),
    mutant("shape_gradients_numpy", "BroadcastTo, Reshape, Transpose, Negate and DivScalar gradients in numpy",
           {B},
           ops("BroadcastTo.gradient", """
               shape = node.inputs[0].shape
               grad = out_grad.numpy()
               grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
               grad = grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
               return Tensor(grad.reshape(shape), requires_grad=False)
               """),
           ops("Reshape.gradient", "return Tensor(out_grad.numpy().reshape(node.inputs[0].shape))"),
           ops("Transpose.gradient", """
               i, j = (-1, -2) if self.axes is None else self.axes
               return Tensor(numpy.swapaxes(out_grad.numpy(), i, j))
               """),
           ops("Negate.gradient", "return Tensor(-out_grad.numpy())"),
           ops("DivScalar.gradient", "return Tensor(out_grad.numpy() / self.scalar)")),
    mutant("exp_gradient_uses_input", "Exp.gradient: out_grad * x instead of out_grad * exp(x)", {B, S, N},
           ops("Exp.gradient", "return out_grad * node.inputs[0]")),
    mutant("divide_gradient_b_sign", "EWiseDiv.gradient for b forgets the minus sign", {B},
           ops("EWiseDiv.gradient", """
               a, b = node.inputs
               return out_grad / b, out_grad * a / (b * b)
               """)),
    mutant("power_scalar_gradient_off_by_one", "PowerScalar.gradient: n * x^n instead of n * x^(n-1)", {B},
           ops("PowerScalar.gradient", """
               return out_grad * mul_scalar(power_scalar(node.inputs[0], self.scalar), self.scalar)
               """)),
    mutant("ewise_pow_gradient_b_without_log", "EWisePow.gradient for b: out_grad * a^b, no log(a)", {B},
           ops("EWisePow.gradient", """
               a, b = node.inputs
               return out_grad * b * power(a, b - 1), out_grad * node
               """)),
    # Swapping axes (0, 2) of a 3-D array equals reversing all of them: the
    # cases use axes whose swap differs from the reversal.
    mutant("transpose_reverses_all_axes_when_given", "Transpose with axes given reverses every axis",
           {F, B}, ops("Transpose.compute", """
               if self.axes is None:
                   return array_api.swapaxes(a, -1, -2)
               return array_api.transpose(a)
               """)),
    mutant("transpose_gradient_ignores_axes", "Transpose.gradient always swaps the last two axes", {B},
           ops("Transpose.gradient", "return transpose(out_grad)")),
    mutant("negate_gradient_identity", "Negate.gradient returns out_grad", {B, S, N},
           ops("Negate.gradient", "return out_grad")),
    mutant("divide_scalar_gradient_multiplies", "DivScalar.gradient multiplies by the scalar", {B, S, N},
           ops("DivScalar.gradient", "return mul_scalar(out_grad, self.scalar)")),
    # ---------------------------------------------------------------- Q3
    mutant("topo_pre_order", "find_topo_sort appends a node before its inputs", {T, C, N},
           autograd("topo_sort_dfs", """
               if node in visited:
                   return
               visited.add(node)
               topo_order.append(node)
               for inp in node.inputs:
                   topo_sort_dfs(inp, visited, topo_order)
               """)),
    mutant("topo_node_twice", "topo_sort_dfs never marks nodes visited: shared nodes appear twice", {T, C, N},
           autograd("topo_sort_dfs", """
               for inp in node.inputs:
                   topo_sort_dfs(inp, visited, topo_order)
               topo_order.append(node)
               """)),
    mutant("topo_inputs_reversed", "topo_sort_dfs visits inputs last to first (valid, not the DFS order)", {T},
           autograd("topo_sort_dfs", TOPO_DFS.format(inputs="reversed(node.inputs)"))),
    # ---------------------------------------------------------------- Q4
    mutant("adjoints_overwritten", "compute_gradient keeps the last partial adjoint instead of the sum", {C, N},
           autograd("compute_gradient_of_variables",
                    COMPUTE_GRADIENT.format(order=REVERSED, combine="grads[node][-1]"))),
    mutant("gradient_forward_order", "compute_gradient walks the topological order forwards", {C, N},
           autograd("compute_gradient_of_variables",
                    COMPUTE_GRADIENT.format(order="find_topo_sort([output_tensor])", combine=SUM))),
    mutant("adjoints_summed_in_numpy", "partial adjoints summed in numpy: gradient of gradient breaks", {C},
           autograd("compute_gradient_of_variables", COMPUTE_GRADIENT.format(
               order=REVERSED, combine="Tensor(sum(g.numpy() for g in grads[node]))"))),
    # Only .grad of intermediate nodes shows this, which the course never
    # reads: an advisory now, no points lost.
    mutant("grad_only_on_leaves", "compute_gradient sets .grad on leaves only", set(),
           autograd("compute_gradient_of_variables", """
               grads = {output_tensor: [out_grad]}
               for node in reverse_topo_order:
                   if node not in grads:
                       continue
                   adjoint = sum_node_list(grads[node])
                   if node.op is None:
                       node.grad = adjoint
                       continue
                   for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(adjoint, node)):
                       if partial is not None:
                           grads.setdefault(inp, []).append(partial)
               """),
           reported_by={"compute_gradient_diamond_intermediate", "compute_gradient_squared_product_intermediate"}),
    mutant("grads_accumulate_across_calls", "a second backward adds to the gradients of the first", {C},
           autograd("compute_gradient_of_variables", COMPUTE_GRADIENT.format(
               order=REVERSED,
               combine="sum_node_list(grads[node] + ([node.grad] if getattr(node, 'grad', None) "
                       "is not None else []))"))),
    # ---------------------------------------------------------------- Q5
    mutant("softmax_without_mean", "softmax_loss sums over the batch instead of averaging", {S, N},
           canonical.softmax(canonical.SOFTMAX.replace(") / Z.shape[0]", ")"))),
    mutant("softmax_mean_over_classes", "softmax_loss divides by the number of classes", {S, N},
           canonical.softmax(canonical.SOFTMAX.replace("Z.shape[0]", "Z.shape[1]"))),
    mutant("parse_mnist_not_normalized", "parse_mnist leaves pixels in [0, 255]", {S},
           parse(convert=".astype(np.float32)")),
    mutant("parse_mnist_float64", "parse_mnist returns float64 pixels", {S},
           parse(convert=" / 255.0")),
    mutant("parse_mnist_labels_float", "parse_mnist returns float32 labels", {S},
           parse(labels=".astype(np.float32)")),
    # ---------------------------------------------------------------- Q6
    mutant("relu_mask_on_output_ge", "ReLU.gradient masks output >= 0 (always true)", {N},
           ops("ReLU.gradient", """
               return out_grad * Tensor((node.numpy() >= 0).astype(out_grad.dtype), requires_grad=False)
               """)),
    mutant("relu_compute_abs", "ReLU.compute returns |x|", {N},
           ops("ReLU.compute", "return array_api.abs(a)")),
    mutant("nn_epoch_shuffles", "nn_epoch shuffles the examples", {N},
           canonical.nn_epoch(prepare="order = np.random.permutation(X.shape[0]); X, y = X[order], y[order]")),
    # Beyond the contract: the docstring says nothing of a last, smaller batch
    # (the course's tests use whole batches), so it is reported, not scored.
    mutant("nn_epoch_skips_last_partial_batch", "nn_epoch drops the last, smaller batch", set(),
           canonical.nn_epoch(batches="[(s, s + batch) for s in range(0, X.shape[0] - batch + 1, batch)]"),
           reported_by={"nn_epoch_ndl_partial_batch"}),
    mutant("nn_epoch_overlapping_batches", "batches overlap by one example", {N},
           canonical.nn_epoch(batches="[(s, s + batch + 1) for s in range(0, X.shape[0], batch)]")),
    mutant("nn_epoch_lr_twice", "nn_epoch applies the learning rate twice", {N},
           canonical.nn_epoch(step=canonical.STEP.replace("lr * W.grad", "2 * lr * W.grad"))),
    # Not a bug in the course's eyes (it compares with a tolerance): the
    # float width is an advisory now.
    mutant("nn_epoch_float64_one_hot", "float64 one-hot labels upcast the weights to float64", set(),
           canonical.nn_epoch(one_hot=canonical.ONE_HOT.replace("np.float32", "np.float64")),
           reported_by={"nn_epoch_ndl_weights_float32"}),
    mutant("nn_epoch_no_relu", "nn_epoch forgets the ReLU", {N},
           canonical.nn_epoch(logits="(X_b @ W1) @ W2")),
]
