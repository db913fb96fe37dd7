"""Q4: reverse-mode AD through compute_gradient_of_variables / backward.
Graphs use only the given ops (add, multiply and their scalar forms) so the
cases test the graph walk, not Q1/Q2 op code."""
import numpy as np

from .registry import table
from .util import randn, tensor_check


def _grad(ndl, node, what):
    return tensor_check(ndl, node.grad, f"{what}.grad").numpy()


def composite(ndl, sm):
    x, y = ndl.Tensor(randn(201, 3)), ndl.Tensor(randn(202, 3))
    out = ndl.multiply(ndl.add(ndl.multiply(x, y), ndl.mul_scalar(x, 3.0)), ndl.add_scalar(y, 2.0))
    out.backward()
    return [_grad(ndl, x, "x"), _grad(ndl, y, "y")]


def reused_node(ndl, sm):
    """x appears five times: its adjoint is the sum of five partials."""
    x = ndl.Tensor(randn(203, 2, 2))
    out = ndl.add(ndl.add(ndl.multiply(ndl.multiply(x, x), x), ndl.mul_scalar(x, 2.0)), x)
    out.backward()
    return _grad(ndl, x, "x")


def diamond(ndl, sm):
    x = ndl.Tensor(randn(204, 4))
    a, b = ndl.mul_scalar(x, 3.0), ndl.add_scalar(x, 1.0)
    out = ndl.add(ndl.multiply(a, b), a)
    out.backward()
    return [_grad(ndl, x, "x"), _grad(ndl, a, "a"), _grad(ndl, b, "b")]


def explicit_out_grad(ndl, sm):
    x, w = ndl.Tensor(randn(205, 2, 3)), ndl.Tensor(randn(206, 2, 3))
    out = ndl.multiply(ndl.multiply(x, w), x)
    ndl.autograd.compute_gradient_of_variables(out, ndl.Tensor(randn(207, 2, 3)))
    return [_grad(ndl, x, "x"), _grad(ndl, w, "w")]


def intermediate_grads(ndl, sm):
    x, w = ndl.Tensor(randn(208, 3)), ndl.Tensor(randn(209, 3))
    t = ndl.multiply(x, w)
    out = ndl.multiply(t, t)
    out.backward(ndl.Tensor(randn(210, 3)))
    return [_grad(ndl, t, "t"), _grad(ndl, x, "x"), _grad(ndl, w, "w")]


def second_order_simple(ndl, sm):
    """y = x*x + x*z: dy/dx = 2x + z, whose gradient is 2 (x) and 1 (z)."""
    x, z = ndl.Tensor(randn(211, 3)), ndl.Tensor(randn(212, 3))
    y = ndl.add(ndl.multiply(x, x), ndl.multiply(x, z))
    y.backward()
    g = tensor_check(ndl, x.grad, "x.grad")
    first = g.numpy().copy()
    g.backward()
    return [first, _grad(ndl, x, "x"), _grad(ndl, z, "z")]


def second_order_cubic(ndl, sm):
    """y = x^3 (products only): dy/dx = 3x^2, d2y/dx2 = 6x."""
    x = ndl.Tensor(randn(213, 5))
    y = ndl.multiply(ndl.multiply(x, x), x)
    y.backward()
    g = tensor_check(ndl, x.grad, "x.grad")
    g.backward()
    return _grad(ndl, x, "x")


def backward_twice(ndl, sm):
    """A later backward overwrites the gradients of an earlier one."""
    x = ndl.Tensor(randn(214, 3))
    ndl.multiply(x, x).backward()
    ndl.mul_scalar(x, 5.0).backward()
    return _grad(ndl, x, "x")


def long_chain(ndl, sm):
    x = ndl.Tensor(np.full(2, 0.5))
    y = x
    for k in range(120):
        y = ndl.add(ndl.mul_scalar(y, 0.99), ndl.mul_scalar(x, 0.01 * (k % 3)))
    y.backward()
    return _grad(ndl, x, "x")


ROWS = [
    ("compute_gradient_composite", "(x*y + 3x) * (y + 2) on (3,) vectors, out_grad ones", composite),
    ("compute_gradient_reused_node", "x*x*x + 2x + x: adjoints of a reused node are summed", reused_node),
    ("compute_gradient_diamond", "a = 3x, b = x + 1, a*b + a: gradients of x, a and b", diamond),
    ("compute_gradient_second_order", "gradient of gradient: y = x*x + x*z, then x.grad.backward()", second_order_simple),
]
HIDDEN = [
    ("compute_gradient_explicit_out_grad", "compute_gradient_of_variables with a given out_grad", explicit_out_grad),
    ("compute_gradient_intermediate", "gradients stored on intermediate nodes", intermediate_grads),
    ("compute_gradient_second_order_cubic", "gradient of gradient of x*x*x", second_order_cubic),
    ("compute_gradient_backward_twice", "a second backward overwrites the first's gradients", backward_twice),
    ("compute_gradient_long_chain", "a 120-step chain reusing x at every step", long_chain),
]
table("compute_gradient", globals(), ROWS)
table("compute_gradient", globals(), HIDDEN, hidden=True)
