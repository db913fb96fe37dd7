# Generated from grader/shipped/cases/autodiff.py by `make handout`; do not edit.
"""Q4: reverse-mode AD through backward() / compute_gradient_of_variables.
Graphs are built with Tensor operators, as the course's tests and notebook
build them, and only those of the given ops (+, * and their scalar forms),
so the cases test the graph walk, not Q1/Q2 op code. Scored cases read
`.grad` of the graph's inputs only, as the course does; `.grad` of
intermediate nodes is advisory."""

from .registry import case
from .util import EXACT, positive, randn, rng, tensor_check


def _grad(ndl, node, what):
    return tensor_check(ndl, node.grad, f"{what}.grad").numpy()


def composite(ndl, sm):
    x, y = ndl.Tensor(randn(201, 3)), ndl.Tensor(randn(202, 3))
    out = (x * y + x * 3.0) * (y + 2.0)
    out.backward()
    return [_grad(ndl, x, "x"), _grad(ndl, y, "y")]


def reused_node(ndl, sm):
    """x appears five times: its adjoint is the sum of five partials."""
    x = ndl.Tensor(randn(203, 2, 2))
    out = x * x * x + x * 2.0 + x
    out.backward()
    return _grad(ndl, x, "x")


def _diamond(ndl):
    x = ndl.Tensor(randn(204, 4))
    a, b = x * 3.0, x + 1.0
    (a * b + a).backward()
    return x, a, b


def diamond(ndl, sm):
    x, _, _ = _diamond(ndl)
    return _grad(ndl, x, "x")


def diamond_intermediate(ndl, sm):
    _, a, b = _diamond(ndl)
    return [_grad(ndl, a, "a"), _grad(ndl, b, "b")]


def _squared_product(ndl):
    x, w = ndl.Tensor(randn(208, 3)), ndl.Tensor(randn(209, 3))
    t = x * w
    (t * t).backward(ndl.Tensor(randn(210, 3)))
    return x, w, t


def squared_product_intermediate(ndl, sm):
    _, _, t = _squared_product(ndl)
    return _grad(ndl, t, "t")


def second_order_simple(ndl, sm):
    """y = x*x + x*z: dy/dx = 2x + z, whose gradient is 2 (x) and 1 (z)."""
    x, z = ndl.Tensor(randn(211, 3)), ndl.Tensor(randn(212, 3))
    (x * x + x * z).backward()
    g = tensor_check(ndl, x.grad, "x.grad")
    first = g.numpy().copy()
    g.backward()
    return [first, _grad(ndl, x, "x"), _grad(ndl, z, "z")]


def backward_twice(ndl, sm):
    """A later backward replaces the gradients of an earlier one."""
    x, w = ndl.Tensor(randn(214, 3)), ndl.Tensor(randn(217, 3))
    (x * x).backward()
    (x * w).backward()
    return _grad(ndl, x, "x")


def grads(name, description, fn, contract="leaf_grads", hidden=False):
    return case("compute_gradient", name, contract, description, fn, hidden=hidden, exact=EXACT)


def beyond(name, contract, description, fn):
    return case("compute_gradient", name, contract, description, fn, advisory=True, exact=EXACT)


CASES = [
    grads("composite", "(x*y + 3x) * (y + 2) on (3,) vectors, out_grad ones", composite),
    grads("reused_node", "x*x*x + 2x + x: adjoints of a reused node are summed", reused_node),
    grads("diamond", "a = 3x, b = x + 1, a*b + a: the gradient of x", diamond),
    grads("second_order", "gradient of gradient: y = x*x + x*z, then x.grad.backward()", second_order_simple,
          contract="grad_of_grad"),
    beyond("diamond_intermediate", "intermediate_grads", "a = 3x, b = x + 1, a*b + a: .grad of a and b",
           diamond_intermediate),
    beyond("squared_product_intermediate", "intermediate_grads", "t = x*w, t*t: .grad of t",
           squared_product_intermediate),
    beyond("backward_twice", "backward_twice", "x*x, then x*w: the second backward's gradient of x",
           backward_twice),
]
