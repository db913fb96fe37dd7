"""Which line of the course's own hw1 each contract line rests on.

CITES maps every CONTRACT line (and the BEYOND lines whose limit the course
states) to the course's words it rests on: (file in the course's hw1
repository, words quoted from one line of it). A scored case's citations
are its contract line's plus its own (`Case.cites`). The course is
https://github.com/dlsyscourse/hw1; tests/course/hw1/ holds the copies the
project checks these quotes against (tests/course/hw1/SOURCE.md), and a
quote the course does not have fails tests/grading/test_course_cites.py.

Plain data (tuples of strings): `as_table()` gives it as JSON-ready rows.
"""
OPS = "python/needle/ops/ops_mathematic.py"
AUTOGRAD = "python/needle/autograd.py"
SIMPLE_ML = "apps/simple_ml.py"
NOTEBOOK = "hw1.ipynb"
TESTS = "tests/hw1/test_autograd_hw.py"
FILES = (OPS, AUTOGRAD, SIMPLE_ML, NOTEBOOK, TESTS)
MIN_QUOTE = 16  # a quote shorter than this could be found almost anywhere

CITES = {
    # Q1 forward
    "power_scalar": ((OPS, '"""Op raise a tensor to an (integer) power."""'),
                     (OPS, "def __init__(self, scalar: int):"),
                     (NOTEBOOK, "- `PowerScalar`: raise input to an integer (scalar) power")),
    "ewise_pow": ((NOTEBOOK, "- `EWisePow`: raise input to an integer power, element-wise (2 inputs)"),
                  (OPS, '"""Op to element-wise raise a tensor to a power."""')),
    "divide": ((NOTEBOOK, "- `EWiseDiv`: true division of the inputs, element-wise (2 inputs)"),
               (OPS, '"""Op to element-wise divide two nodes."""')),
    "divide_scalar": ((NOTEBOOK, "- `DivScalar`: true division of the input by a scalar, element-wise "
                                 "(1 input, `scalar` - number)"),),
    "matmul": ((NOTEBOOK, "- `MatMul`: matrix multiplication of the inputs (2 inputs)"),
               (TESTS, "ndl.Tensor(np.random.randn(6, 6, 5, 4)),"),
               (TESTS, "ndl.Tensor(np.random.randn(6, 6, 4, 3)),"),
               (TESTS, "ndl.Tensor(np.random.randn(4, 3)),")),
    "summation": ((NOTEBOOK, "- `Summation`: sum of array elements over given axes (1 input, `axes` - tuple)"),
                  (OPS, "def __init__(self, axes: Optional[tuple] = None):")),
    # the course's forward tests call ndl.summation(..., axes=1) in these two functions; the
    # `axes=1,` line itself is too short to quote (tests/grading/test_course_cites.py reads the calls)
    "summation_int_axis": ((TESTS, "def test_summation_forward():"), (TESTS, "def submit_forward():")),
    "broadcast_to": ((NOTEBOOK, "- `BroadcastTo`: broadcast an array to a new shape (1 input, `shape` - tuple)"),),
    "reshape": ((NOTEBOOK, "- `Reshape`: gives a new shape to an array without changing its data "
                           "(1 input, `shape` - tuple)"),),
    "negate": ((NOTEBOOK, "- `Negate`: numerical negative, element-wise (1 input)"),),
    "transpose": ((NOTEBOOK, "- `Transpose`: reverses the order of two axes (axis1, axis2), defaults to the "
                             "last two axes (1 input, `axes` - tuple)"),
                  (OPS, "def __init__(self, axes: Optional[tuple] = None):")),
    "log": ((NOTEBOOK, "- `Log`: natural log of the input (1 input)"),
            (TESTS, "gradient_check(ndl.log, ndl.Tensor(1 + np.random.rand(5, 4)))")),
    "exp": ((NOTEBOOK, "- `Exp`: natural exponential of the input (1 input)"),),
    # Q2 backward
    "gradient": ((AUTOGRAD, "Compute partial adjoint for each input value for a given output adjoint."),
                 (NOTEBOOK, "whereas the sizes of the `Tensor` objects _returned_ by `gradient()` have to always "
                            "be the same as the original _inputs_ to the operator")),
    "gradient_of_gradient": ((NOTEBOOK, "This means that any call you make within this function _should_ be done "
                                        "via `TensorOp` operations themselves (so that you can take gradients of "
                                        "gradients)."),),
    # Q3
    "topo_order": ((AUTOGRAD, "A simple algorithm is to do a post-order DFS traversal on the given nodes,"),
                   (NOTEBOOK, "- Ensure that you do a post-order depth-first search, otherwise the test cases "
                              "will fail.")),
    # Q4
    "leaf_grads": ((AUTOGRAD, "Store the computed result in the grad field of each Variable."),
                   (NOTEBOOK, "This will enable use of the `backward` function that computes the gradient and "
                              "stores the gradient in the `grad` field of each input `Tensor`.")),
    "grad_of_grad": ((NOTEBOOK, "We can extend that graph further by composing more operations and run reverse "
                                "mode AD again on the gradient"),),
    # Q5
    "parse_mnist_values": ((SIMPLE_ML, "(num_examples x input_dim) where 'input_dim' is the full"),
                           (SIMPLE_ML, "should be normalized to have a minimum value of 0.0 and a"),
                           (SIMPLE_ML, "for MNIST will contain the values 0-9.")),
    "parse_mnist_dtypes": ((SIMPLE_ML, "Values should be of type np.float32, and the data"),
                           (SIMPLE_ML, "labels of the examples.  Values should be of type np.int8 and")),
    "softmax_loss_value": ((NOTEBOOK, r"\ell_{\mathrm{softmax}}(z, y) = \log\sum_{i=1}^k \exp z_i - z_y."),
                           (SIMPLE_ML, "Average softmax loss over the sample. (ndl.Tensor[np.float32])")),
    "softmax_loss_gradient": ((TESTS, "gradient_check(softmax_loss, Zsmall, ysmall, tol=0.01, backward=True)"),),
    # Q6
    "relu": ((NOTEBOOK, "1. Begin by filling out the function `ReLU` operator in "
                        "`python/needle/ops/ops_mathematic.py`."),
             (TESTS, "gradient_check(ndl.relu, ndl.Tensor(np.random.randn(5, 4)))")),
    "nn_epoch": ((SIMPLE_ML, "The function should use the step size lr, and the specified batch size (and"),
                 (SIMPLE_ML, "again, without randomizing the order of X)."),
                 (NOTEBOOK, r"\min_{W_1, W_2} \;\; \ell_{\mathrm{softmax}}(\mathrm{ReLU}(X W_1) W_2, y).")),
    "nn_epoch_learns": ((TESTS, "W1, W2 = nn_epoch(X, y, W1, W2, lr=0.2, batch=100)"),
                        (TESTS, "loss_err(ndl.relu(ndl.Tensor(X) @ W1) @ W2, y),")),
    # Beyond the contract: the course's words that stop short of the case.
    "fractional_power": ((OPS, "def __init__(self, scalar: int):"),
                         (OPS, '"""Op raise a tensor to an (integer) power."""')),
    "float_width": ((TESTS, "np.testing.assert_allclose("),),
    "batch_size1_broadcast": ((NOTEBOOK, "- `MatMul`: matrix multiplication of the inputs (2 inputs)"),),
}


def citations(case) -> tuple:
    """A case's citations: its contract line's, then its own."""
    return tuple(CITES.get(case.contract, ())) + tuple(case.cites)


def as_table(cases) -> list:
    """[{"case", "contract", "advisory", "cites": [{"file", "quote"}]}]: the record as JSON-ready rows."""
    return [{"case": c.name, "contract": c.contract, "advisory": c.advisory,
             "cites": [{"file": f, "quote": q} for f, q in citations(c)]} for c in cases]
