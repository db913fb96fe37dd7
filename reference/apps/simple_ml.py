"""hw1 applications of needle: MNIST loading, softmax loss and a two-layer
network trained by SGD."""
import gzip
import struct
import sys

import numpy as np

sys.path.append("python/")
import needle as ndl

IMAGE_MAGIC = 2051  # idx3-ubyte header magic (unsigned byte, 3 dimensions)
LABEL_MAGIC = 2049  # idx1-ubyte header magic (unsigned byte, 1 dimension)


def parse_mnist(image_filename, label_filename):
    """Read an images file and a labels file in MNIST's gzipped idx format.

    Args:
        image_filename (str): gzipped idx3-ubyte images file.
        label_filename (str): gzipped idx1-ubyte labels file.

    Returns:
        Tuple (X, y):
            X (numpy.ndarray[np.float32]): shape (num_examples, 784), one
                flattened 28x28 image per row, pixel values scaled to [0, 1]
                (0 stays 0, 255 becomes 1).
            y (numpy.ndarray[np.uint8]): shape (num_examples,), the digits
                0-9 labelling the rows of X.
    """
    # Q5
    ### BEGIN YOUR SOLUTION
    def read_idx(filename, magic, header_ints):
        """The uint8 payload of a gzipped idx file, shaped by its header."""
        try:
            with gzip.open(filename, "rb") as f:
                raw = f.read()
        except (OSError, EOFError) as e:
            raise ValueError(f"{filename}: not a readable gzip file ({e}); fetch it again") from e
        header_len = 4 * (1 + header_ints)
        if len(raw) < header_len:
            raise ValueError(f"{filename}: truncated header ({len(raw)} bytes); fetch it again")
        found, *dims = struct.unpack(">" + "I" * (1 + header_ints), raw[:header_len])
        if found != magic:
            raise ValueError(f"{filename}: magic number {found}, expected {magic}; wrong or corrupt file")
        expected = header_len + int(np.prod(dims))
        if len(raw) != expected:
            raise ValueError(f"{filename}: {len(raw)} bytes, header promises {expected}; "
                             "truncated or corrupt file, fetch it again")
        return np.frombuffer(raw, dtype=np.uint8, offset=header_len).reshape(dims)

    images = read_idx(image_filename, IMAGE_MAGIC, header_ints=3)
    labels = read_idx(label_filename, LABEL_MAGIC, header_ints=1)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{image_filename} has {images.shape[0]} images but "
                         f"{label_filename} has {labels.shape[0]} labels")
    X = images.reshape(images.shape[0], -1).astype(np.float32) / np.float32(255)
    return X, labels
    ### END YOUR SOLUTION


def softmax_loss(Z, y_one_hot):
    """Average softmax (cross-entropy) loss over a batch.

    Args:
        Z (ndl.Tensor[np.float32]): shape (batch_size, num_classes), the
            logits for each example.
        y_one_hot (ndl.Tensor[np.int8]): shape (batch_size, num_classes),
            1 at the true class of each example and 0 elsewhere.

    Returns:
        The mean over the batch of log(sum(exp(z))) - z_true, as a 0-d
        ndl.Tensor.
    """
    # Q5
    ### BEGIN YOUR SOLUTION
    # lse(z) = m + log(sum(exp(z - m))) for any m. Logits within +-80 need
    # no shift (m = 0): exp of them stays well inside float32's range. Wider
    # ones are shifted by their row's max, a constant taken from the data,
    # so that exp cannot overflow nor a row's sum underflow to 0. (Finding
    # and applying the shift costs half of the loss's forward pass, hence
    # the test.) The true logits come from Z itself, so that the adjoint of
    # y_one_hot is -Z / batch, as the loss's formula says.
    logits = Z.realize_cached_data()
    shifted = Z
    if np.abs(logits).max() >= 80:
        row_max = logits.max(axis=1, keepdims=True)
        shifted = Z + ndl.Tensor.make_const(np.broadcast_to(-row_max, logits.shape))
    log_sum_exp = ndl.log(ndl.summation(ndl.exp(shifted), axes=(1,)))
    if shifted is not Z:
        log_sum_exp = log_sum_exp + ndl.Tensor.make_const(row_max[:, 0])
    # Each row's lse - z_true first: with float64 labels that is float64, so
    # that float32 round-off does not blur the loss's finite differences (the
    # course's gradient check). The rows are divided by the batch size while
    # still an array, then summed: an array divided by a Python number keeps
    # its dtype under numpy 1 (the course's) and 2 alike, where their 0-d sum
    # divided by it would turn float32 into float64 under numpy 1.
    per_example = log_sum_exp - ndl.summation(Z * y_one_hot, axes=(1,))
    return ndl.summation(per_example / logits.shape[0])
    ### END YOUR SOLUTION


def nn_epoch(X, y, W1, W2, lr=0.1, batch=100):
    """One epoch of SGD for the two-layer network logits = ReLU(X W1) W2.

    Goes through the batches of X in order (no shuffling), and for each one
    takes a step of size lr on the average softmax loss of that batch.

    Args:
        X (np.ndarray[np.float32]): (num_examples, input_dim) inputs.
        y (np.ndarray[np.uint8]): (num_examples,) class labels.
        W1 (ndl.Tensor[np.float32]): (input_dim, hidden_dim) first weights.
        W2 (ndl.Tensor[np.float32]): (hidden_dim, num_classes) second weights.
        lr (float): step size.
        batch (int): minibatch size.

    Returns:
        Tuple (W1, W2): the updated weights, as ndl.Tensors of float32.
    """
    # Q6
    ### BEGIN YOUR SOLUTION
    # Row i of the identity is the one-hot vector of class i; in the weights'
    # dtype, so that float32 stays float32. Made for all of y at once: each
    # step then takes a slice (a view), not a gather.
    y_one_hot = np.eye(W2.shape[1], dtype=W2.dtype)[y]
    # Adjoints are linear in the seed given to backward(): seeded with lr,
    # the weights' .grads are the SGD steps themselves. The steps are taken
    # in place on private copies of the weights (the caller's stay as they
    # are), which saves two full-size temporaries per step.
    seed = ndl.init.constant(c=lr, dtype=W2.dtype)
    W1_data, W2_data = W1.numpy().copy(), W2.numpy().copy()
    W1 = ndl.Tensor.make_const(W1_data, requires_grad=True)
    W2 = ndl.Tensor.make_const(W2_data, requires_grad=True)
    for start in range(0, X.shape[0], batch):
        # The batch and labels are constants. They get adjoints too, as every
        # input does, but the batch's (a full-size matmul) is built lazily
        # and never computed here.
        inputs = ndl.Tensor.make_const(X[start:start + batch])
        logits = ndl.relu(inputs @ W1) @ W2
        loss = softmax_loss(logits, ndl.Tensor.make_const(y_one_hot[start:start + batch]))
        loss.backward(seed)
        W1_step, W2_step = W1.grad.numpy(), W2.grad.numpy()
        # Every node's .grad is a graph that refers back to the nodes: a
        # reference cycle, which only the garbage collector frees, late and in
        # bulk (measured: a fifth of the epoch's time, with a dozen steps of
        # arrays kept alive). Dropping the adjoints, as PyTorch's
        # zero_grad(set_to_none=True) does, lets reference counting free it.
        # (Every node has a .grad after backward, so a node whose .grad is
        # already None has been visited: a stack walk, no topological sort.)
        to_clear = [loss]
        while to_clear:
            node = to_clear.pop()
            if node.grad is not None:
                node.grad = None
                to_clear.extend(node.inputs)
        # Free the graph now rather than when the next step rebinds these
        # names: the next step's arrays then reuse memory still in cache.
        del node, loss, logits, inputs
        W1_data -= W1_step
        W2_data -= W2_step
    return W1, W2
    ### END YOUR SOLUTION


### CODE BELOW IS FOR ILLUSTRATION, YOU DO NOT NEED TO EDIT


def loss_err(h, y):
    """The mean softmax loss and the error rate of logits h on labels y."""
    y_one_hot = np.zeros((y.shape[0], h.shape[-1]))
    y_one_hot[np.arange(y.size), y] = 1
    y_ = ndl.Tensor(y_one_hot)
    return softmax_loss(h, y_).numpy(), np.mean(h.numpy().argmax(axis=1) != y)
