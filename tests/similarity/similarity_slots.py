"""Bodies of hw1's longer blocks assembled from interchangeable parts, so
that a synthetic class has as many ways of writing them as a real one:
each part is a list of correct alternatives a student might write, and a
classmate picks one per part. Two independent classmates then share some
parts (the common idioms), rarely the whole block, as real students do.

A block is a list of (indent, alternatives); every alternative of a part
uses the same names as the others, so any combination is correct.
"""

from __future__ import annotations

import random
import textwrap

NN_EPOCH = [
    (
        0,
        [
            "for start in range(0, X.shape[0], batch):\n    end = start + batch",
            "for start in range(0, len(y), batch):\n    end = min(start + batch, len(y))",
            "for step in range((X.shape[0] + batch - 1) // batch):\n    start, end = step * batch, (step + 1) * batch",
        ],
    ),
    (
        4,
        [
            "xb = ndl.Tensor(X[start:end])",
            "xb = ndl.Tensor(X[start:end], requires_grad=False)",
            "X_batch = X[start:end]\nxb = ndl.Tensor(X_batch)",
        ],
    ),
    (
        4,
        [
            "yb = np.eye(W2.shape[1], dtype=np.float32)[y[start:end]]",
            "labels = y[start:end]\nyb = np.zeros((labels.shape[0], W2.shape[1]), dtype=np.float32)\n"
            "yb[np.arange(labels.shape[0]), labels] = 1",
            "labels = y[start:end]\nyb = np.zeros((len(labels), W2.shape[1]), np.float32)\n"
            "for r in range(len(labels)):\n    yb[r, labels[r]] = 1.0",
        ],
    ),
    (
        4,
        [
            "logits = ndl.relu(xb @ W1) @ W2",
            "h = ndl.relu(ndl.matmul(xb, W1))\nlogits = ndl.matmul(h, W2)",
            "Z1 = xb.matmul(W1)\nlogits = ndl.relu(Z1).matmul(W2)",
        ],
    ),
    (
        4,
        [
            "loss = softmax_loss(logits, ndl.Tensor(yb))\nloss.backward()",
            "softmax_loss(logits, ndl.Tensor(yb, requires_grad=False)).backward()",
        ],
    ),
    (
        4,
        [
            "W1 = ndl.Tensor(W1.numpy() - lr * W1.grad.numpy())\nW2 = ndl.Tensor(W2.numpy() - lr * W2.grad.numpy())",
            "W1, W2 = (ndl.Tensor(W.numpy() - lr * W.grad.numpy()) for W in (W1, W2))",
            "g1, g2 = W1.grad.numpy(), W2.grad.numpy()\nW1 = ndl.Tensor(W1.numpy() - lr * g1)\n"
            "W2 = ndl.Tensor(W2.numpy() - lr * g2)",
            "W1 = ndl.Tensor(W1.realize_cached_data() - lr * W1.grad.realize_cached_data())\n"
            "W2 = ndl.Tensor(W2.realize_cached_data() - lr * W2.grad.realize_cached_data())",
        ],
    ),
    (0, ["return W1, W2", "return (W1, W2)"]),
]

PARSE_MNIST = [
    (
        0,
        [
            "with gzip.open(image_filesname, 'rb') as f:\n    raw_images = f.read()",
            "f = gzip.open(image_filesname)\nraw_images = f.read()\nf.close()",
            "raw_images = gzip.open(image_filesname).read()",
        ],
    ),
    (
        0,
        [
            "with gzip.open(label_filename, 'rb') as f:\n    raw_labels = f.read()",
            "g = gzip.open(label_filename)\nraw_labels = g.read()\ng.close()",
            "raw_labels = gzip.open(label_filename).read()",
        ],
    ),
    (
        0,
        [
            "X = np.frombuffer(raw_images, dtype=np.uint8, offset=16)",
            "X = np.frombuffer(raw_images[16:], dtype=np.uint8)",
            "n_img = struct.unpack('>I', raw_images[4:8])[0]\n"
            "X = np.frombuffer(raw_images, np.uint8, count=n_img * 784, offset=16)",
        ],
    ),
    (
        0,
        [
            "X = X.reshape(-1, 784).astype(np.float32) / 255.0",
            "X = (X.reshape(-1, 28 * 28) / 255).astype(np.float32)",
            "X = X.astype(np.float32).reshape((X.size // 784, 784))\nX /= 255",
            "X = np.array(X, dtype=np.float32).reshape(-1, 784) * (1.0 / 255)",
        ],
    ),
    (
        0,
        [
            "y = np.frombuffer(raw_labels, dtype=np.uint8, offset=8)",
            "y = np.frombuffer(raw_labels[8:], dtype=np.uint8)",
            "y = np.array(list(raw_labels[8:]), dtype=np.uint8)",
        ],
    ),
    (0, ["return X, y", "return (X, y)", "return X.astype(np.float32), y.astype(np.uint8)"]),
]

SOFTMAX_LOSS = [
    (
        0,
        [
            "",
            "Z = Z + ndl.Tensor(-Z.numpy().max(axis=1, keepdims=True)).broadcast_to(Z.shape)",
            "m = Z.numpy().max(axis=1)\nZ = Z - ndl.broadcast_to(ndl.reshape(ndl.Tensor(m), (Z.shape[0], 1)), Z.shape)",
        ],
    ),
    (
        0,
        [
            "lse = ndl.log(ndl.summation(ndl.exp(Z), axes=(1,)))",
            "exps = ndl.exp(Z)\nlse = ndl.log(exps.sum(axes=(1,)))",
            "sums = ndl.summation(ndl.exp(Z), (1,))\nlse = ndl.log(sums)",
        ],
    ),
    (
        0,
        [
            "zy = ndl.summation(Z * y_one_hot, axes=(1,))",
            "zy = (Z * y_one_hot).sum(axes=(1,))",
            "zy = ndl.summation(ndl.multiply(Z, y_one_hot), (1,))",
        ],
    ),
    (
        0,
        [
            "return ndl.summation(lse - zy) / Z.shape[0]",
            "batch_size = Z.shape[0]\nreturn (lse - zy).sum() / batch_size",
            "return ndl.divide_scalar(ndl.summation(lse - zy), Z.shape[0])",
            "loss = ndl.summation(lse) - ndl.summation(zy)\nreturn loss / Z.shape[0]",
        ],
    ),
]

COMPUTE_GRADIENT = [
    (0, ["for node in reverse_topo_order:"]),
    (
        4,
        [
            "node.grad = sum_node_list(node_to_output_grads_list[node])",
            "grads = node_to_output_grads_list[node]\ntotal = grads[0]\nfor g in grads[1:]:\n    total = total + g\n"
            "node.grad = total",
            "adj = sum_node_list(node_to_output_grads_list.pop(node))\nnode.grad = adj",
        ],
    ),
    (4, ["if node.op is None:\n    continue", "if node.is_leaf():\n    continue", "if not node.inputs:\n    continue"]),
    (
        4,
        [
            "partials = node.op.gradient_as_tuple(node.grad, node)",
            "partials = node.op.gradient(node.grad, node)\nif not isinstance(partials, tuple):\n"
            "    partials = (partials,)",
        ],
    ),
    (
        4,
        [
            "for inp, part in zip(node.inputs, partials):\n    node_to_output_grads_list.setdefault(inp, []).append(part)",
            "for i, inp in enumerate(node.inputs):\n    if inp not in node_to_output_grads_list:\n"
            "        node_to_output_grads_list[inp] = []\n    node_to_output_grads_list[inp].append(partials[i])",
            "for inp, part in zip(node.inputs, partials):\n"
            "    node_to_output_grads_list[inp] = node_to_output_grads_list.get(inp, []) + [part]",
        ],
    ),
]

MATMUL_GRADIENT = [
    (0, ["a, b = node.inputs", "a = node.inputs[0]\nb = node.inputs[1]"]),
    (
        0,
        [
            "ga = matmul(out_grad, transpose(b))\ngb = matmul(transpose(a), out_grad)",
            "ga = out_grad @ b.transpose()\ngb = a.transpose() @ out_grad",
            "ga = MatMul()(out_grad, Transpose()(b))\ngb = MatMul()(Transpose()(a), out_grad)",
        ],
    ),
    (
        0,
        [
            "if len(ga.shape) > len(a.shape):\n    ga = summation(ga, tuple(range(len(ga.shape) - len(a.shape))))\n"
            "if len(gb.shape) > len(b.shape):\n    gb = summation(gb, tuple(range(len(gb.shape) - len(b.shape))))",
            "ga = _sum_to_shape(ga, a.shape)\ngb = _sum_to_shape(gb, b.shape)",
            "if ga.shape != a.shape:\n    ga = _sum_to_shape(ga, a.shape)\nif gb.shape != b.shape:\n"
            "    gb = _sum_to_shape(gb, b.shape)",
        ],
    ),
    (0, ["return ga, gb", "return (ga, gb)"]),
]

SUMMATION_GRADIENT = [
    (0, ["in_shape = node.inputs[0].shape", "x = node.inputs[0]\nin_shape = x.shape"]),
    (
        0,
        [
            "axes = range(len(in_shape)) if self.axes is None else self.axes",
            "if self.axes is None:\n    axes = tuple(range(len(in_shape)))\nelse:\n    axes = self.axes",
            "axes = list(range(len(in_shape))) if self.axes is None else list(self.axes)",
        ],
    ),
    (
        0,
        [
            "new_shape = list(in_shape)\nfor ax in axes:\n    new_shape[ax] = 1",
            "new_shape = [1 if i in axes or i - len(in_shape) in axes else d for i, d in enumerate(in_shape)]",
            "new_shape = [d for d in in_shape]\nfor ax in axes:\n    new_shape[ax % len(in_shape)] = 1",
        ],
    ),
    (
        0,
        [
            "return broadcast_to(reshape(out_grad, new_shape), in_shape)",
            "return out_grad.reshape(tuple(new_shape)).broadcast_to(in_shape)",
            "g = reshape(out_grad, tuple(new_shape))\nreturn broadcast_to(g, in_shape)",
        ],
    ),
]

SUM_TO_SHAPE = [
    (0, ["shape = tuple(shape)", ""]),
    (
        0,
        [
            "while len(grad.shape) > len(shape):\n    grad = summation(grad, axes=(0,))",
            "lead = len(grad.shape) - len(shape)\nif lead > 0:\n    grad = summation(grad, axes=tuple(range(lead)))",
            "for _ in range(len(grad.shape) - len(shape)):\n    grad = grad.sum(axes=(0,))",
        ],
    ),
    (
        0,
        [
            "axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)",
            "axes = []\nfor i in range(len(shape)):\n    if shape[i] == 1 and grad.shape[i] > 1:\n        axes.append(i)\n"
            "axes = tuple(axes)",
        ],
    ),
    (
        0,
        [
            "if axes:\n    grad = summation(grad, axes=axes)\nreturn reshape(grad, shape)",
            "return reshape(summation(grad, axes) if axes else grad, shape)",
            "if len(axes) > 0:\n    grad = grad.sum(axes)\nreturn grad.reshape(shape)",
        ],
    ),
]

EWISE_POW_GRADIENT = [
    (0, ["a, b = node.inputs", "a = node.inputs[0]\nb = node.inputs[1]"]),
    (
        0,
        [
            "ga = out_grad * b * power(a, b - 1)",
            "ga = multiply(out_grad, multiply(b, power(a, add_scalar(b, -1))))",
            "ga = out_grad * b * node / a",
        ],
    ),
    (
        0,
        [
            "gb = out_grad * node * log(a)",
            "gb = multiply(out_grad, multiply(power(a, b), log(a)))",
            "gb = out_grad * log(a) * node",
        ],
    ),
    (0, ["return _sum_to_shape(ga, a.shape), _sum_to_shape(gb, b.shape)", "return ga, gb"]),
]

SLOTTED = {
    "nn_epoch": NN_EPOCH,
    "parse_mnist": PARSE_MNIST,
    "softmax_loss": SOFTMAX_LOSS,
    "compute_gradient_of_variables": COMPUTE_GRADIENT,
    "MatMul.gradient": MATMUL_GRADIENT,
    "Summation.gradient": SUMMATION_GRADIENT,
    "_sum_to_shape": SUM_TO_SHAPE,
    "EWisePow.gradient": EWISE_POW_GRADIENT,
}


def assemble(parts, rng: random.Random) -> str:
    """One body: an alternative drawn for each part, at its indent."""
    chosen = [textwrap.indent(rng.choice(alternatives), " " * indent) for indent, alternatives in parts]
    return "\n".join(c for c in chosen if c.strip())
