"""Correct submissions written the way students really write hw1: each
passes the course's own tests, so each must score 100 here. What each does
beyond the course's contract shows up as failed advisory cases, listed in
`advisories` (exactly: an advisory that starts or stops failing is a change
of verdict to look at).

They are built on the reference with our own bodies swapped in, including
softmax_loss and nn_epoch written as the course notebook suggests (no
canonical base), and with extra files some students leave behind.
"""
from dataclasses import dataclass

from grader.core.assignment import Assignment

from .build import AUTOGRAD, OPS, SIMPLE_ML, Body, Replace

# The numpy student code is graded with (assignment.toml's [environment]).
NUMPY_MAJOR = int(dict(p.split("==") for p in Assignment.hw1().packages)["numpy"].split(".")[0])


@dataclass(frozen=True)
class CourseStyle:
    name: str
    why: str                 # how a real student wrote it, and why the course accepts it
    edits: tuple
    advisories: frozenset    # advisory cases it fails (and only those)
    extra_files: tuple = ()  # (path, text) pairs added to the submission
    pending: str = ""        # what the grader still lacks for it (a strict xfail until then)


def course_style(name, why, *edits, advisories=(), extra_files=(), pending=""):
    return CourseStyle(name, why, tuple(edits), frozenset(advisories), tuple(extra_files), pending)


# softmax_loss as the course notebook writes it: no max shift, Tensor methods.
SOFTMAX_NOTEBOOK = """
batch_size = Z.shape[0]
lse = ndl.log(ndl.exp(Z).sum((1,)))
z_y = (Z * y_one_hot).sum((1,))
return (lse - z_y).sum() / batch_size
"""

# nn_epoch as most students write it: float64 one-hot from np.eye, inputs
# left with requires_grad=True, weights rebuilt from numpy each step.
NN_EPOCH_STUDENT = """
num_examples, num_classes = X.shape[0], W2.shape[1]
for i in range(0, num_examples, batch):
    X_b = ndl.Tensor(X[i:i + batch])
    y_b = y[i:i + batch]
    Iy = np.eye(num_classes)[y_b]
    Z = ndl.relu(X_b.matmul(W1)).matmul(W2)
    loss = softmax_loss(Z, ndl.Tensor(Iy))
    loss.backward()
    W1 = ndl.Tensor(W1.numpy() - lr * W1.grad.numpy())
    W2 = ndl.Tensor(W2.numpy() - lr * W2.grad.numpy())
return W1, W2
"""

# Float widths as the graded numpy makes them. numpy 1 (value-based casting):
# an array with a numpy float64 scalar keeps float32 (so `a / np.float64(s)`
# passes), while a 0-d result with a Python number becomes float64 (so the
# notebook's `.sum() / batch_size` loss is float64). numpy 2 (NEP 50) has
# it the other way round.
FLOAT64_WEIGHTS = {"forward_power_scalar_float32", "forward_log_float32"}
WEIGHTS_F64 = {"nn_epoch_ndl_weights_float32"}
LOSS_FLOAT32 = {"softmax_loss_ndl_value_float32"}  # the loss comes back float64
LOSS_F64 = LOSS_FLOAT32 if NUMPY_MAJOR == 1 else set()  # ... from a 0-d sum divided by an int
F64_SCALAR = set() if NUMPY_MAJOR == 1 else {"forward_divide_scalar_float32"}  # a / np.float64(s) is float64

TUPLE_ONLY_SUMMATION = Body(OPS, "Summation.gradient", """
    shape = list(node.inputs[0].shape)
    axes = range(len(shape)) if self.axes is None else self.axes
    for ax in axes:
        shape[ax] = 1
    return broadcast_to(reshape(out_grad, shape), node.inputs[0].shape)
    """)

COURSE_STYLE = [
    course_style("notebook_softmax_student_epoch", "softmax_loss as in the notebook and an nn_epoch with float64 "
                 "one-hot labels: its weights come back float64, and under numpy 1 its loss too (a 0-d sum "
                 "divided by an int), which the course's tolerance accepts",
                 Body(SIMPLE_ML, "softmax_loss", SOFTMAX_NOTEBOOK), Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT),
                 advisories=WEIGHTS_F64 | LOSS_F64),
    course_style("float64_internals", "ops computed in float64 (astype), weights returned float64; its "
                 "np.float64 divisor keeps float32 arrays float32 under numpy 1, not under numpy 2",
                 Body(OPS, "PowerScalar.compute", "return array_api.power(a.astype(array_api.float64), self.scalar)"),
                 Body(OPS, "DivScalar.compute", "return a / array_api.float64(self.scalar)"),
                 Body(OPS, "Log.compute", "return array_api.log(a.astype('float64'))"),
                 Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT),
                 advisories=FLOAT64_WEIGHTS | WEIGHTS_F64 | LOSS_FLOAT32 | F64_SCALAR),
    course_style("tuple_only_summation", "Summation.gradient iterates over self.axes: a tuple, as the handout "
                 "types it; an int axis breaks it", TUPLE_ONLY_SUMMATION,
                 advisories={"backward_summation_int_axis"}),
    course_style("summation_forward_one_axis_at_a_time", "Summation.compute sums one axis at a time, last "
                 "first, over the tuple it was given or the one int axis the course's tests pass",
                 Body(OPS, "Summation.compute", """
                     if self.axes is None:
                         return array_api.sum(a)
                     axes = (self.axes,) if isinstance(self.axes, int) else self.axes
                     for ax in sorted(axes, reverse=True):
                         a = array_api.sum(a, axis=ax)
                     return a
                     """)),
    course_style("ewise_pow_same_shapes", "EWisePow.gradient for operands of one shape, as the course uses it",
                 Body(OPS, "EWisePow.gradient", """
                     a, b = node.inputs
                     return out_grad * b * power(a, b - 1), out_grad * power(a, b) * log(a)
                     """),
                 advisories={"backward_ewise_pow_broadcast"}),
    course_style("matmul_sums_leading_axes_only", "MatMul.gradient sums only the extra leading batch axes",
                 Body(OPS, "MatMul.gradient", """
                     a, b = node.inputs
                     ga, gb = matmul(out_grad, transpose(b)), matmul(transpose(a), out_grad)
                     if len(ga.shape) > len(a.shape):
                         ga = summation(ga, tuple(range(len(ga.shape) - len(a.shape))))
                     if len(gb.shape) > len(b.shape):
                         gb = summation(gb, tuple(range(len(gb.shape) - len(b.shape))))
                     return ga, gb
                     """),
                 advisories={"backward_matmul_size1_batch"}),
    course_style("package_import_from_root", "apps/simple_ml.py imports `from python.needle.ops import *` "
                 "(it works from the homework root, where the course runs it)",
                 Replace(SIMPLE_ML, "import needle as ndl\n", "import needle as ndl\nfrom python.needle.ops import *\n"),
                 Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT), advisories=WEIGHTS_F64),
    course_style("debug_log_in_cwd", "nn_epoch appends each batch's loss to debug.log in the working directory",
                 Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT.replace(
                     "    loss.backward()\n",
                     "    loss.backward()\n    with open('debug.log', 'a') as f:\n"
                     "        f.write(str(loss.numpy()) + '\\n')\n")),
                 advisories=WEIGHTS_F64),
    course_style("heavy_printing", "prints in forward ops and every batch's loss",
                 Body(OPS, "MatMul.compute", "print('matmul', a.shape, b.shape)\nreturn a @ b"),
                 Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT.replace(
                     "    loss.backward()\n", "    loss.backward()\n    print('batch', i, 'loss', loss.numpy())\n")),
                 advisories=WEIGHTS_F64),
    course_style("int_one_hot_labels", "one-hot labels as int64 (np.zeros(..., dtype=int)): the loss and the "
                 "weights are float64",
                 Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT.replace(
                     "Iy = np.eye(num_classes)[y_b]",
                     "Iy = np.zeros((y_b.shape[0], num_classes), dtype=int); Iy[np.arange(y_b.shape[0]), y_b] = 1")),
                 advisories=WEIGHTS_F64),
    course_style("renamed_multiply_helper", "the given helper `multiply` renamed `Multiply` (the Tensor "
                 "operators, which the course's tests use, still work)",
                 Replace(OPS, "def multiply(a, b):\n", "def Multiply(a, b):\n")),
    course_style("grads_on_leaves_only", "compute_gradient_of_variables stores .grad on leaves only",
                 Body(AUTOGRAD, "compute_gradient_of_variables", """
                     for node in reverse_topo_order:
                         if node not in node_to_output_grads_list:
                             continue
                         grad = sum_node_list(node_to_output_grads_list[node])
                         if node.op is None:
                             node.grad = grad
                             continue
                         for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(grad, node)):
                             node_to_output_grads_list.setdefault(inp, []).append(partial)
                     """),
                 Body(SIMPLE_ML, "nn_epoch", NN_EPOCH_STUDENT),
                 advisories=WEIGHTS_F64 | {"compute_gradient_diamond_intermediate",
                                           "compute_gradient_squared_product_intermediate"}),
    course_style("transpose_via_swapaxes", "Transpose.compute with numpy.swapaxes and explicit defaults",
                 Body(OPS, "Transpose.compute", """
                     if self.axes:
                         return array_api.swapaxes(a, self.axes[0], self.axes[1])
                     return array_api.swapaxes(a, a.ndim - 2, a.ndim - 1)
                     """)),
    course_style("stray_files_left_behind", "notebook checkpoints, a results folder and a copy of the "
                 "tests in the submission",
                 extra_files=(("apps/.ipynb_checkpoints/simple_ml-checkpoint.py", "raise SystemExit(1)\n"),
                              ("results/notes.txt", "scratch\n"), ("tests/hw1/test_mine.py", "assert False\n"))),
]
