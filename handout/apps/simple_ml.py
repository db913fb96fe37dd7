# Generated from reference/apps/simple_ml.py by `make handout`; students fill in this copy; instructors edit the source.
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
    raise NotImplementedError("Q5: parse_mnist")
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
    raise NotImplementedError("Q5: softmax_loss")
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
    raise NotImplementedError("Q6: nn_epoch")
    ### END YOUR SOLUTION


### CODE BELOW IS FOR ILLUSTRATION, YOU DO NOT NEED TO EDIT


def loss_err(h, y):
    """The mean softmax loss and the error rate of logits h on labels y."""
    y_one_hot = np.zeros((y.shape[0], h.shape[-1]))
    y_one_hot[np.arange(y.size), y] = 1
    y_ = ndl.Tensor(y_one_hot)
    return softmax_loss(h, y_).numpy(), np.mean(h.numpy().argmax(axis=1) != y)
