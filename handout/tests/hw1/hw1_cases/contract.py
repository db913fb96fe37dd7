# Generated from grader/shipped/cases/contract.py by `make handout`; do not edit.
"""What the course's hw1 handout promises, one line per checkable promise.

This is the rule for what may cost points: a wrong value computed through
the course's public API (Tensor operators, the `ndl` op functions the
course's tests call, the documented functions of simple_ml), on inputs this
contract admits, compared the way the course compares (a tolerance, never
the float width). Every scored case names one of these lines; a case
beyond them is advisory ("Beyond the assignment, no points") and names the
line it goes past.

Sources: the handout's signatures and type hints (`Summation(axes:
Optional[tuple])`, `Transpose(axes: Optional[tuple])`, `PowerScalar(scalar: int)`),
its docstrings, the notebook's text, and the behaviour of the course's
reference and public tests on the inputs these admit (element-wise binary
ops on equal shapes, broadcasting made explicit with `broadcast_to`;
batched MatMul with equal batch dimensions or one 2-D side).
"""

CONTRACT = {
    # Q1 forward (compute)
    "power_scalar": "PowerScalar(scalar: int): a ** scalar element-wise, for an integer exponent "
                    "(a Python or numpy int: \"Op raise a tensor to an (integer) power\")",
    "ewise_pow": "EWisePow: a ** b element-wise, a and b of the same shape",
    "divide": "EWiseDiv: a / b element-wise, a and b of the same shape",
    "divide_scalar": "DivScalar(scalar): a / scalar element-wise, scalar a number",
    "matmul": "MatMul: a @ b for 2-D matrices, and batched with equal batch dimensions or one 2-D side",
    "summation": "Summation(axes: Optional[tuple]): sum over all axes (None) or over the axes of a tuple",
    "summation_int_axis": "Summation's forward over one int axis (axes=1): the course's own test_summation_forward "
                          "and its graded submit_forward pass it",
    "broadcast_to": "BroadcastTo(shape): numpy broadcasting of a to shape",
    "reshape": "Reshape(shape): the same entries in row-major order, in the given shape",
    "negate": "Negate: -a element-wise",
    "transpose": "Transpose(axes: Optional[tuple]): swap the last two axes (None), or the two axes given",
    "log": "Log: natural logarithm element-wise, positive inputs",
    "exp": "Exp: exponential element-wise",
    # Q2 backward (gradient)
    "gradient": "Op.gradient(out_grad, node): one partial adjoint per input, each of that input's "
                "shape, for every input the op's forward admits",
    "gradient_of_gradient": "gradients are built from needle ops, so they can be differentiated again",
    # Q3 topological sort
    "topo_order": "find_topo_sort(node_list): every node the given nodes depend on, once each, in the "
                  "post-order of a depth-first search from each given node in turn, inputs in order",
    # Q4 reverse mode
    "leaf_grads": "backward() / compute_gradient_of_variables(output, out_grad): every input Tensor "
                  "of the graph gets .grad, the sum of the adjoints of all paths to it",
    "grad_of_grad": "a .grad is itself a graph of needle ops: x.grad.backward() differentiates it",
    # Q5
    "parse_mnist_values": "parse_mnist: X of shape (examples, 784), pixel values scaled to [0, 1]; "
                          "y the labels 0-9",
    "parse_mnist_dtypes": "parse_mnist: X of dtype np.float32 (\"Values should be of type np.float32\") and y "
                          "integer labels (\"Values should be of type np.int8\"; any integer dtype holding the "
                          "labels passes: the course's tests only index with y)",
    "softmax_loss_value": "softmax_loss(Z, y_one_hot): mean over the batch of log(sum(exp(z))) - z_true, "
                          "for one-hot labels of any numeric dtype",
    "softmax_loss_gradient": "softmax_loss is differentiable with needle ops with respect to the logits Z",
    # Q6
    "relu": "ReLU: max(a, 0) element-wise, and its gradient away from 0",
    "nn_epoch": "nn_epoch(X, y, W1, W2, lr, batch): one SGD epoch over the batches in order, logits "
                "ReLU(X W1) W2, returning the updated (W1, W2) as needle Tensors",
    "nn_epoch_learns": "after one epoch over MNIST (lr 0.2, batch 100) the weights classify the test set "
                       "about as well as the reference's",
}

# Advisory cases name what they go beyond, in the student's words.
BEYOND = {
    "int_axes": "Summation.gradient with an int axis (the handout types axes as Optional[tuple]; the course's "
                "backward tests pass tuples)",
    "negative_axes": "Summation over a negative axis",
    "implicit_broadcast": "element-wise ops on operands of different shapes (the handout broadcasts "
                          "explicitly with broadcast_to)",
    "batch_size1_broadcast": "MatMul broadcasting a batch dimension of size 1",
    "array_scalar": "a one-element array given where the handout passes a number",
    "fractional_power": "PowerScalar with a fractional exponent (the handout types PowerScalar(scalar: int), "
                        "\"an (integer) power\")",
    "float_width": "the float width of results (the course compares values with a tolerance)",
    "intermediate_grads": ".grad on intermediate nodes (the course reads .grad of inputs only)",
    "backward_twice": "a second backward() replacing, not adding to, the first one's .grad",
    "label_gradient": "the gradient of softmax_loss with respect to the labels, off one-hot labels (correct "
                      "formulations differ there; the course checks each against its own loss)",
    "partial_batch": "nn_epoch when the example count is not a multiple of the batch (the docstring does "
                     "not say what the last, smaller batch does; the course's tests use whole batches)",
}
