"""hw1 applications of needle: MNIST loading, softmax loss and a two-layer
network trained by SGD."""
import gzip
import struct
import sys

import numpy as np

sys.path.append("python/")
import needle as ndl


def parse_mnist(image_filesname, label_filename):
    """Read an images file and a labels file in MNIST's gzipped idx format.

    Args:
        image_filesname (str): gzipped idx3-ubyte images file (the
            parameter's name is spelled as in the course's handout).
        label_filename (str): gzipped idx1-ubyte labels file.

    Returns:
        Tuple (X, y):
            X (numpy.ndarray[np.float32]): shape (num_examples, 784), one
                flattened 28x28 image per row, pixel values scaled to [0, 1]
                (0 stays 0, 255 becomes 1). Values should be of type
                np.float32.
            y (numpy.ndarray[dtype=np.int8]): shape (num_examples,), the
                labels of the rows of X. Values should be of type np.int8 and
                for MNIST will contain the values 0-9 (any integer dtype
                holding them is accepted: y is only used to index).
    """
    # Q5
    ### BEGIN YOUR SOLUTION
    # An idx file starts with big-endian uint32s: a magic number, then its dimensions.
    with gzip.open(image_filesname, "rb") as f:
        _, num, rows, cols = struct.unpack(">4I", f.read(16))
        images = np.frombuffer(f.read(), dtype=np.uint8).reshape(num, rows, cols)
    with gzip.open(label_filename, "rb") as f:
        f.read(8)  # the magic number and the count
        labels = np.frombuffer(f.read(), dtype=np.uint8)
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
    # log(sum(exp(z))) - z_true for each row, averaged over the batch. The
    # log-sum-exp is taken as m + log(sum(exp(z - m))), m the row's max, so that
    # exp cannot overflow.
    m = ndl.Tensor(Z.numpy().max(axis=1), requires_grad=False)
    shifted = Z - ndl.broadcast_to(ndl.reshape(m, (Z.shape[0], 1)), Z.shape)
    log_sum_exp = ndl.log(ndl.summation(ndl.exp(shifted), axes=(1,))) + m
    true_logit = ndl.summation(Z * y_one_hot, axes=(1,))
    # Divided before the sum: under numpy 1, a 0-d float32 divided by an int is float64.
    return ndl.summation((log_sum_exp - true_logit) / Z.shape[0])
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
    one_hot = np.eye(W2.shape[1], dtype=np.float32)  # row k: the one-hot label of class k
    for start in range(0, X.shape[0], batch):
        X_batch = ndl.Tensor(X[start:start + batch], requires_grad=False)
        y_one_hot = one_hot[y[start:start + batch]]
        logits = ndl.relu(X_batch @ W1) @ W2
        loss = softmax_loss(logits, ndl.Tensor(y_one_hot, requires_grad=False))
        loss.backward()
        W1 = ndl.Tensor(W1.numpy() - lr * W1.grad.numpy())
        W2 = ndl.Tensor(W2.numpy() - lr * W2.grad.numpy())
        # Each adjoint refers back to nodes of the graph it came from, so a
        # step's graph is a knot of reference cycles that Python frees only
        # at its next garbage collection, batches later. Untying the .grad
        # links frees it here, and its arrays are reused while still cached.
        for node in ndl.autograd.find_topo_sort([loss]):
            node.grad = None
    return W1, W2
    ### END YOUR SOLUTION


### CODE BELOW IS FOR ILLUSTRATION, YOU DO NOT NEED TO EDIT


def loss_err(h, y):
    """The mean softmax loss and the error rate of logits h on labels y."""
    y_one_hot = np.zeros((y.shape[0], h.shape[-1]))
    y_one_hot[np.arange(y.size), y] = 1
    y_ = ndl.Tensor(y_one_hot)
    return softmax_loss(h, y_).numpy(), np.mean(h.numpy().argmax(axis=1) != y)
