"""Three complete hw1 solutions written independently of each other and of
the reference, each in a style real students use (the reference's own
blocks are a fourth). Each entry is block id -> body; similarity_class.py swaps them
into the reference's files. Forced one-liners (`return a / b`) come out the
same in every style, as they do in a real class: that is what the scoring
must discount.

Terse: numpy calls and Tensor operators, few temporaries.
Verbose: named temporaries, explicit loops, needle functions.
Methods: Tensor methods and op classes called directly, comprehensions.
"""

import textwrap

from catalogue.build import AUTOGRAD, OPS, SIMPLE_ML, Body, Replace

FILE = {
    "compute_gradient_of_variables": AUTOGRAD,
    "find_topo_sort": AUTOGRAD,
    "topo_sort_dfs": AUTOGRAD,
    "parse_mnist": SIMPLE_ML,
    "softmax_loss": SIMPLE_ML,
    "nn_epoch": SIMPLE_ML,
}

TERSE = {
    "compute_gradient_of_variables": """
        for node in reverse_topo_order:
            node.grad = sum_node_list(node_to_output_grads_list[node])
            if node.is_leaf():
                continue
            for x, g in zip(node.inputs, node.op.gradient_as_tuple(node.grad, node)):
                node_to_output_grads_list.setdefault(x, []).append(g)
        """,
    "find_topo_sort": """
        seen, out = set(), []
        for n in node_list:
            topo_sort_dfs(n, seen, out)
        return out
        """,
    "topo_sort_dfs": """
        if node in visited: return
        visited.add(node)
        for p in node.inputs: topo_sort_dfs(p, visited, topo_order)
        topo_order.append(node)
        """,
    "_sum_to_shape": """
        while len(grad.shape) > len(shape):
            grad = summation(grad, axes=(0,))
        ax = tuple(i for i, d in enumerate(shape) if d == 1 and grad.shape[i] != 1)
        return reshape(summation(grad, axes=ax), shape) if ax else grad
        """,
    "PowerScalar.compute": "return a ** self.scalar",
    "PowerScalar.gradient": "return out_grad * self.scalar * node.inputs[0] ** (self.scalar - 1)",
    "EWisePow.compute": "return a ** b",
    "EWisePow.gradient": """
        a, b = node.inputs
        return (_sum_to_shape(out_grad * b * a ** (b - 1), a.shape),
                _sum_to_shape(out_grad * node * log(a), b.shape))
        """,
    "EWiseDiv.compute": "return a / b",
    "EWiseDiv.gradient": """
        a, b = node.inputs
        return out_grad / b, -out_grad * a / b ** 2
        """,
    "DivScalar.compute": "return a / self.scalar",
    "DivScalar.gradient": "return out_grad / self.scalar",
    "Transpose.compute": """
        i, j = self.axes or (-2, -1)
        return array_api.swapaxes(a, i, j)
        """,
    "Transpose.gradient": "return transpose(out_grad, self.axes)",
    "Reshape.compute": "return array_api.reshape(a, self.shape)",
    "Reshape.gradient": "return reshape(out_grad, node.inputs[0].shape)",
    "BroadcastTo.compute": "return array_api.broadcast_to(a, self.shape).copy()",
    "BroadcastTo.gradient": "return _sum_to_shape(out_grad, node.inputs[0].shape)",
    "Summation.compute": "return array_api.sum(a, axis=self.axes)",
    "Summation.gradient": """
        s = list(node.inputs[0].shape)
        for i in (range(len(s)) if self.axes is None else self.axes): s[i] = 1
        return broadcast_to(reshape(out_grad, s), node.inputs[0].shape)
        """,
    "MatMul.compute": "return a @ b",
    "MatMul.gradient": """
        a, b = node.inputs
        return (_sum_to_shape(out_grad @ transpose(b), a.shape),
                _sum_to_shape(transpose(a) @ out_grad, b.shape))
        """,
    "Negate.compute": "return -a",
    "Negate.gradient": "return -out_grad",
    "Log.compute": "return array_api.log(a)",
    "Log.gradient": "return out_grad / node.inputs[0]",
    "Exp.compute": "return array_api.exp(a)",
    "Exp.gradient": "return out_grad * node",
    "ReLU.compute": "return array_api.maximum(a, 0)",
    "ReLU.gradient": "return out_grad * Tensor(node.inputs[0].realize_cached_data() > 0)",
    "parse_mnist": """
        with gzip.open(image_filesname) as f:
            X = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784).astype(np.float32) / 255
        with gzip.open(label_filename) as f:
            y = np.frombuffer(f.read(), np.uint8, offset=8)
        return X, y
        """,
    "softmax_loss": """
        return (ndl.log(ndl.exp(Z).sum((1,))).sum() - (Z * y_one_hot).sum()) / Z.shape[0]
        """,
    "nn_epoch": """
        k = W2.shape[1]
        for i in range(0, X.shape[0], batch):
            xb, yb = ndl.Tensor(X[i:i + batch]), y[i:i + batch]
            loss = softmax_loss(ndl.relu(xb @ W1) @ W2, ndl.Tensor(np.eye(k, dtype=np.float32)[yb]))
            loss.backward()
            W1 = ndl.Tensor(W1.numpy() - lr * W1.grad.numpy())
            W2 = ndl.Tensor(W2.numpy() - lr * W2.grad.numpy())
        return W1, W2
        """,
}

VERBOSE = {
    "compute_gradient_of_variables": """
        for current in reverse_topo_order:
            partial_adjoints = node_to_output_grads_list[current]
            adjoint = partial_adjoints[0]
            for extra in partial_adjoints[1:]:
                adjoint = adjoint + extra
            current.grad = adjoint
            if current.op is None:
                continue
            input_adjoints = current.op.gradient_as_tuple(adjoint, current)
            for index in range(len(current.inputs)):
                parent = current.inputs[index]
                if parent not in node_to_output_grads_list:
                    node_to_output_grads_list[parent] = []
                node_to_output_grads_list[parent].append(input_adjoints[index])
        """,
    "find_topo_sort": """
        visited_nodes = set()
        ordering = list()
        for start_node in node_list:
            if start_node not in visited_nodes:
                topo_sort_dfs(start_node, visited_nodes, ordering)
        return ordering
        """,
    "topo_sort_dfs": """
        visited.add(node)
        for child in node.inputs:
            if child in visited:
                continue
            topo_sort_dfs(child, visited, topo_order)
        topo_order.append(node)
        """,
    "_sum_to_shape": """
        target_shape = tuple(shape)
        extra_dims = len(grad.shape) - len(target_shape)
        reduce_axes = []
        for axis in range(len(grad.shape)):
            if axis < extra_dims:
                reduce_axes.append(axis)
            elif target_shape[axis - extra_dims] == 1 and grad.shape[axis] != 1:
                reduce_axes.append(axis)
        if len(reduce_axes) == 0:
            return reshape(grad, target_shape)
        summed = summation(grad, axes=tuple(reduce_axes))
        return reshape(summed, target_shape)
        """,
    "PowerScalar.compute": "return array_api.power(a, self.scalar)",
    "PowerScalar.gradient": """
        base = node.inputs[0]
        exponent = self.scalar
        local_derivative = mul_scalar(power_scalar(base, exponent - 1), exponent)
        return multiply(out_grad, local_derivative)
        """,
    "EWisePow.compute": "return array_api.power(a, b)",
    "EWisePow.gradient": """
        base, exponent = node.inputs
        full_shape = node.shape
        base_full = broadcast_to(base, full_shape)
        exponent_full = broadcast_to(exponent, full_shape)
        grad_base = multiply(out_grad, multiply(exponent_full, power(base_full, add_scalar(exponent_full, -1))))
        grad_exponent = multiply(out_grad, multiply(node, log(base_full)))
        return _sum_to_shape(grad_base, base.shape), _sum_to_shape(grad_exponent, exponent.shape)
        """,
    "EWiseDiv.compute": "return array_api.divide(a, b)",
    "EWiseDiv.gradient": """
        numerator, denominator = node.inputs
        grad_numerator = divide(out_grad, denominator)
        grad_denominator = negate(divide(multiply(out_grad, numerator), multiply(denominator, denominator)))
        return grad_numerator, grad_denominator
        """,
    "DivScalar.compute": "return array_api.divide(a, self.scalar)",
    "DivScalar.gradient": "return divide_scalar(out_grad, self.scalar)",
    "Transpose.compute": """
        order = list(range(len(a.shape)))
        if self.axes is None:
            first, second = len(order) - 2, len(order) - 1
        else:
            first, second = self.axes
        order[first], order[second] = order[second], order[first]
        return array_api.transpose(a, axes=order)
        """,
    "Transpose.gradient": """
        if self.axes is None:
            return transpose(out_grad)
        return transpose(out_grad, axes=self.axes)
        """,
    "Reshape.compute": "return array_api.reshape(a, newshape=self.shape)",
    "Reshape.gradient": """
        input_shape = node.inputs[0].shape
        return reshape(out_grad, input_shape)
        """,
    "BroadcastTo.compute": "return array_api.broadcast_to(a, shape=self.shape)",
    "BroadcastTo.gradient": """
        input_shape = node.inputs[0].shape
        return _sum_to_shape(out_grad, input_shape)
        """,
    "Summation.compute": """
        if self.axes is None:
            return array_api.sum(a)
        axes = (self.axes,) if isinstance(self.axes, int) else tuple(self.axes)
        return array_api.sum(a, axis=axes)
        """,
    "Summation.gradient": """
        input_shape = node.inputs[0].shape
        if self.axes is None:
            summed_axes = list(range(len(input_shape)))
        else:
            summed_axes = list(self.axes)
        kept_shape = []
        for axis, size in enumerate(input_shape):
            if axis in summed_axes or axis - len(input_shape) in summed_axes:
                kept_shape.append(1)
            else:
                kept_shape.append(size)
        reshaped = reshape(out_grad, tuple(kept_shape))
        return broadcast_to(reshaped, input_shape)
        """,
    "MatMul.compute": "return array_api.matmul(a, b)",
    "MatMul.gradient": """
        left, right = node.inputs
        grad_left = matmul(out_grad, transpose(right))
        grad_right = matmul(transpose(left), out_grad)
        if grad_left.shape != left.shape:
            grad_left = _sum_to_shape(grad_left, left.shape)
        if grad_right.shape != right.shape:
            grad_right = _sum_to_shape(grad_right, right.shape)
        return grad_left, grad_right
        """,
    "Negate.compute": "return array_api.negative(a)",
    "Negate.gradient": "return negate(out_grad)",
    "Log.compute": "return array_api.log(a)",
    "Log.gradient": """
        input_value = node.inputs[0]
        return divide(out_grad, input_value)
        """,
    "Exp.compute": "return array_api.exp(a)",
    "Exp.gradient": """
        exp_of_input = exp(node.inputs[0])
        return multiply(out_grad, exp_of_input)
        """,
    "ReLU.compute": """
        result = a.copy()
        result[result < 0] = 0
        return result
        """,
    "ReLU.gradient": """
        input_data = node.inputs[0].realize_cached_data()
        positive_mask = (input_data > 0).astype(input_data.dtype)
        return multiply(out_grad, Tensor(positive_mask, requires_grad=False))
        """,
    "parse_mnist": """
        image_file = gzip.open(image_filesname, "rb")
        magic, count, rows, cols = struct.unpack(">IIII", image_file.read(16))
        pixel_bytes = image_file.read(count * rows * cols)
        image_file.close()
        images = np.frombuffer(pixel_bytes, dtype=np.uint8).reshape(count, rows * cols)
        images = images.astype(np.float32) / np.float32(255.0)
        label_file = gzip.open(label_filename, "rb")
        magic, label_count = struct.unpack(">II", label_file.read(8))
        labels = np.frombuffer(label_file.read(label_count), dtype=np.uint8)
        label_file.close()
        return images, labels
        """,
    "softmax_loss": """
        batch_size = Z.shape[0]
        exponentials = ndl.exp(Z)
        row_sums = ndl.summation(exponentials, axes=(1,))
        log_normaliser = ndl.log(row_sums)
        true_class_logit = ndl.summation(ndl.multiply(Z, y_one_hot), axes=(1,))
        per_example_loss = log_normaliser - true_class_logit
        total_loss = ndl.summation(per_example_loss)
        return ndl.divide_scalar(total_loss, batch_size)
        """,
    "nn_epoch": """
        number_of_examples = X.shape[0]
        number_of_classes = W2.shape[1]
        start = 0
        while start < number_of_examples:
            end = min(start + batch, number_of_examples)
            inputs = ndl.Tensor(X[start:end], requires_grad=False)
            labels = y[start:end]
            one_hot = np.zeros((end - start, number_of_classes), dtype=np.float32)
            for row in range(end - start):
                one_hot[row, labels[row]] = 1.0
            hidden = ndl.relu(ndl.matmul(inputs, W1))
            logits = ndl.matmul(hidden, W2)
            loss = softmax_loss(logits, ndl.Tensor(one_hot, requires_grad=False))
            loss.backward()
            new_W1 = W1.realize_cached_data() - lr * W1.grad.realize_cached_data()
            new_W2 = W2.realize_cached_data() - lr * W2.grad.realize_cached_data()
            W1 = ndl.Tensor(new_W1, requires_grad=True)
            W2 = ndl.Tensor(new_W2, requires_grad=True)
            start = end
        return W1, W2
        """,
}

METHODS = {
    "compute_gradient_of_variables": """
        for v in reverse_topo_order:
            v.grad = sum_node_list(node_to_output_grads_list.pop(v))
            if v.op is not None:
                pairs = zip(v.inputs, v.op.gradient_as_tuple(v.grad, v))
                [node_to_output_grads_list.setdefault(u, []).append(du) for u, du in pairs]
        """,
    "find_topo_sort": """
        result = []
        done = set()
        [topo_sort_dfs(root, done, result) for root in node_list]
        return result
        """,
    "topo_sort_dfs": """
        if node not in visited:
            visited.add(node)
            [topo_sort_dfs(parent, visited, topo_order) for parent in node.inputs]
            topo_order.append(node)
        """,
    "_sum_to_shape": """
        ndim = len(grad.shape)
        padded = (1,) * (ndim - len(shape)) + tuple(shape)
        axes = tuple(k for k in range(ndim) if padded[k] == 1 and grad.shape[k] != 1)
        if not axes:
            return grad.reshape(shape)
        return grad.sum(axes).reshape(shape)
        """,
    "PowerScalar.compute": "return array_api.power(a, self.scalar)",
    "PowerScalar.gradient": "return out_grad * PowerScalar(self.scalar - 1)(node.inputs[0]) * self.scalar",
    "EWisePow.compute": "return array_api.power(a, b)",
    "EWisePow.gradient": """
        x, p = node.inputs
        dx = out_grad * p * EWisePow()(x, p + (-1))
        dp = out_grad * EWisePow()(x, p) * Log()(x)
        return _sum_to_shape(dx, x.shape), _sum_to_shape(dp, p.shape)
        """,
    "EWiseDiv.compute": "return a / b",
    "EWiseDiv.gradient": """
        x, z = node.inputs
        return EWiseDiv()(out_grad, z), Negate()(EWiseDiv()(out_grad * x, z * z))
        """,
    "DivScalar.compute": "return a / self.scalar",
    "DivScalar.gradient": "return MulScalar(1 / self.scalar)(out_grad)",
    "Transpose.compute": """
        if not self.axes:
            return a.swapaxes(a.ndim - 1, a.ndim - 2)
        return a.swapaxes(*self.axes)
        """,
    "Transpose.gradient": "return Transpose(self.axes)(out_grad)",
    "Reshape.compute": "return a.reshape(self.shape)",
    "Reshape.gradient": "return out_grad.reshape(node.inputs[0].shape)",
    "BroadcastTo.compute": "return array_api.broadcast_to(a, self.shape)",
    "BroadcastTo.gradient": "return _sum_to_shape(out_grad, node.inputs[0].shape)",
    "Summation.compute": "return a.sum(axis=self.axes)",
    "Summation.gradient": """
        shape = node.inputs[0].shape
        axes = range(len(shape)) if self.axes is None else [k % len(shape) for k in self.axes]
        kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
        return out_grad.reshape(kept).broadcast_to(shape)
        """,
    "MatMul.compute": "return array_api.matmul(a, b)",
    "MatMul.gradient": """
        x, w = node.inputs
        gx = out_grad.matmul(w.transpose())
        gw = x.transpose().matmul(out_grad)
        return _sum_to_shape(gx, x.shape), _sum_to_shape(gw, w.shape)
        """,
    "Negate.compute": "return array_api.negative(a)",
    "Negate.gradient": "return Negate()(out_grad)",
    "Log.compute": "return array_api.log(a)",
    "Log.gradient": "return out_grad * PowerScalar(-1)(node.inputs[0])",
    "Exp.compute": "return array_api.exp(a)",
    "Exp.gradient": "return EWiseMul()(out_grad, node)",
    "ReLU.compute": "return a * (a > 0)",
    "ReLU.gradient": """
        mask = Tensor.make_const(node.inputs[0].numpy() > 0)
        return out_grad * mask
        """,
    "parse_mnist": """
        def load(path, skip):
            with gzip.open(path, "rb") as handle:
                return np.frombuffer(handle.read()[skip:], dtype=np.uint8)

        labels = load(label_filename, 8)
        pixels = load(image_filesname, 16).reshape(len(labels), -1)
        return (pixels / 255.0).astype(np.float32), labels
        """,
    "softmax_loss": """
        n = Z.shape[0]
        lse = ndl.log(ndl.exp(Z).sum(axes=(1,)))
        picked = (Z * y_one_hot).sum(axes=(1,))
        return (lse - picked).sum() / n
        """,
    "nn_epoch": """
        eye = np.eye(W2.shape[1], dtype=X.dtype)
        batches = [(s, min(s + batch, len(y))) for s in range(0, len(y), batch)]
        for lo, hi in batches:
            x_t = ndl.Tensor(X[lo:hi])
            target = ndl.Tensor(eye[y[lo:hi]])
            out = ndl.relu(x_t.matmul(W1)).matmul(W2)
            softmax_loss(out, target).backward()
            W1, W2 = [ndl.Tensor(w.numpy() - lr * w.grad.numpy()) for w in (W1, W2)]
        return W1, W2
        """,
}

STYLES = {"terse": TERSE, "verbose": VERBOSE, "methods": METHODS}


# The styles' own helper: the course's handout has no stub for it, so a
# student who wants one defines it beside the ops (above BroadcastTo).
HELPER = "_sum_to_shape"


def helper_def(text: str) -> Replace:
    """The edit that defines the helper with body `text` above BroadcastTo."""
    code = textwrap.indent(textwrap.dedent(text).strip("\n"), "    ")
    return Replace(
        OPS, "class BroadcastTo(TensorOp):\n", f"def {HELPER}(grad, shape):\n{code}\n\n\nclass BroadcastTo(TensorOp):\n"
    )


def body(style: dict, block_id: str):
    """The catalogue edit that puts `style`'s body of block_id in place."""
    if block_id == HELPER:
        return helper_def(style[block_id])
    return Body(FILE.get(block_id, OPS), block_id, style[block_id])
