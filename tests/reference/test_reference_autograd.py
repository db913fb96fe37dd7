"""The graph walk (topological order, reverse accumulation) and the Tensor
API of the reference autograd."""
import numpy as np
import pytest


def leaf(ndl, *values):
    return ndl.Tensor(np.array(values, dtype=np.float64))


# Topological order: post-order DFS following `inputs` in order, each node once.

def test_topo_order_of_a_diamond(ndl):
    a = leaf(ndl, 1.0, 2.0)
    b = ndl.exp(a)
    c = ndl.log(a)
    d = b + c
    assert ndl.autograd.find_topo_sort([d]) == [a, b, c, d]


def test_topo_order_with_shared_subexpressions(ndl):
    x, y = leaf(ndl, 1.0), leaf(ndl, 2.0)
    s = x * y
    t = s + x
    u = t * s
    assert ndl.autograd.find_topo_sort([u]) == [x, y, s, t, u]


def test_topo_order_visits_inputs_in_order(ndl):
    x, y = leaf(ndl, 1.0), leaf(ndl, 2.0)
    assert ndl.autograd.find_topo_sort([y * x])[:2] == [y, x]
    assert ndl.autograd.find_topo_sort([x * y])[:2] == [x, y]


def test_topo_order_of_a_node_used_twice_by_one_op(ndl):
    x = leaf(ndl, 3.0)
    z = x + x
    assert ndl.autograd.find_topo_sort([z]) == [x, z]


def test_topo_order_of_a_deep_diamond_chain(ndl):
    x = leaf(ndl, 0.5)
    left = ndl.exp(x)
    right = ndl.negate(x)
    top = left * right
    side = ndl.exp(right)
    out = top + side
    assert ndl.autograd.find_topo_sort([out]) == [x, left, right, top, side, out]


def test_topo_order_of_several_outputs_shares_the_visited_set(ndl):
    x, y = leaf(ndl, 1.0), leaf(ndl, 2.0)
    p = x + y
    q = ndl.exp(p)
    r = p * y
    assert ndl.autograd.find_topo_sort([q, r]) == [x, y, p, q, r]
    assert ndl.autograd.find_topo_sort([q, q]) == [x, y, p, q]


def test_topo_sort_dfs_appends_to_the_given_list_and_set(ndl):
    x, y = leaf(ndl, 1.0), leaf(ndl, 2.0)
    p = x * y
    visited, order = {x}, []
    ndl.autograd.topo_sort_dfs(p, visited, order)
    assert order == [y, p]  # x counts as visited already
    assert visited == {x, y, p}


# Reverse accumulation.

def test_gradients_accumulate_over_every_use_of_a_node(ndl):
    x = leaf(ndl, 2.0, -1.0)
    y = x * x * x + x  # x used four times
    ndl.summation(y).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2 + 1)


def test_gradient_of_a_shared_subexpression(ndl):
    x, y = leaf(ndl, 1.5), leaf(ndl, -2.0)
    s = x * y
    u = (s + x) * s  # u = x^2 y^2 + x^2 y
    u.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 1.5 * 4.0 + 2 * 1.5 * -2.0)
    np.testing.assert_allclose(y.grad.numpy(), 2 * 1.5 ** 2 * -2.0 + 1.5 ** 2)
    np.testing.assert_allclose(s.grad.numpy(), 2 * (1.5 * -2.0) + 1.5)


def test_compute_gradient_of_variables_sets_grad_on_every_node(ndl):
    x = leaf(ndl, 1.0, 2.0)
    e = ndl.exp(x)
    out = ndl.summation(e * e)
    ndl.autograd.compute_gradient_of_variables(out, ndl.Tensor(np.array(2.0)))
    np.testing.assert_allclose(out.grad.numpy(), 2.0)
    np.testing.assert_allclose(e.grad.numpy(), 4 * np.exp([1.0, 2.0]))
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.exp([2.0, 4.0]))


def test_a_later_backward_overwrites_earlier_grads(ndl):
    x = leaf(ndl, 1.0, 2.0)
    y = ndl.summation(x * 3.0)
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_constants_do_not_stop_gradients_flowing_to_variables(ndl):
    x = leaf(ndl, 1.0, 2.0)
    c = ndl.Tensor(np.array([5.0, 7.0]), requires_grad=False)
    ndl.summation(x * c + c).backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])


def test_an_op_on_constants_only_gives_a_constant_leaf(ndl):
    a = ndl.Tensor(np.ones(2), requires_grad=False)
    out = a + a
    assert out.is_leaf() and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), [2.0, 2.0])


# The Tensor API.

def test_dtype_none_keeps_numpys_inferred_dtype(ndl):
    assert ndl.Tensor([1.0, 2.0]).dtype == np.float64
    assert ndl.Tensor(np.ones(2, np.float32)).dtype == np.float32
    assert ndl.Tensor([1, 2]).dtype == np.array([1, 2]).dtype
    assert ndl.Tensor([1.0], dtype="float32").dtype == np.float32


def test_tensor_from_a_tensor_shares_its_array_when_nothing_changes(ndl):
    a = ndl.Tensor(np.ones(3, np.float32))
    assert ndl.Tensor(a).realize_cached_data() is a.realize_cached_data()
    converted = ndl.Tensor(a, dtype="float64")
    assert converted.dtype == np.float64 and converted.realize_cached_data() is not a.realize_cached_data()


def test_realize_cached_data_returns_the_array_held(ndl):
    t = ndl.Tensor(np.zeros(3))
    array = t.realize_cached_data()
    assert array is t.realize_cached_data()
    array[1] = 4.0  # gradient checkers perturb inputs in place
    np.testing.assert_array_equal(t.numpy(), [0.0, 4.0, 0.0])


def test_data_is_a_detached_tensor_on_the_same_array(ndl):
    x = leaf(ndl, 1.0, 2.0)
    y = x * 2.0
    d = y.data
    assert isinstance(d, ndl.Tensor) and d.is_leaf() and not d.requires_grad
    assert d.realize_cached_data() is y.realize_cached_data()


def test_data_setter_replaces_the_array(ndl):
    t = ndl.Tensor(np.zeros(2, np.float32))
    t.data = ndl.Tensor(np.ones(2, np.float32))
    np.testing.assert_array_equal(t.numpy(), [1.0, 1.0])


def test_data_setter_requires_the_same_dtype(ndl):
    t = ndl.Tensor(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="float64 does not match float32"):
        t.data = ndl.Tensor(np.ones(2))
    with pytest.raises(TypeError, match="must be set to a Tensor"):
        t.data = np.ones(2, np.float32)
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])


def test_detach_makes_a_leaf_with_the_same_array(ndl):
    x = leaf(ndl, 1.0)
    y = ndl.exp(x)
    d = y.detach()
    assert d.is_leaf() and d.op is None and d.inputs == []
    assert d.realize_cached_data() is y.realize_cached_data()
    ndl.summation(d * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0]))  # nothing flows through d


def test_backward_defaults_to_ones_of_the_output_shape_and_dtype(ndl):
    x = ndl.Tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    y = x * x
    y.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), np.ones((2, 2), np.float32))


def test_repr_and_str(ndl):
    t = ndl.Tensor(np.array([1.0, 2.5]))
    assert repr(t) == "needle.Tensor([1.  2.5])"
    assert str(t) == "[1.  2.5]"


def test_shape_dtype_device(ndl):
    t = ndl.Tensor(np.zeros((2, 3), np.float32))
    assert t.shape == (2, 3) and t.dtype == np.float32
    assert t.device == ndl.cpu() and t.device in ndl.all_devices()


def test_reflected_operators(ndl):
    t = leaf(ndl, 1.0, 4.0)
    np.testing.assert_allclose((2.0 + t).numpy(), [3.0, 6.0])
    np.testing.assert_allclose((2.0 * t).numpy(), [2.0, 8.0])
    with pytest.raises(TypeError):  # the course's Tensor has no __rsub__: neither has ours
        2.0 - t
    np.testing.assert_allclose((t - 2.0).numpy(), [-1.0, 2.0])
    np.testing.assert_allclose((-t).numpy(), [-1.0, -4.0])


def test_needle_reexports_the_course_api(ndl):
    functions = ["add", "add_scalar", "multiply", "mul_scalar", "power", "power_scalar", "divide",
                 "divide_scalar", "matmul", "summation", "broadcast_to", "reshape", "negate", "transpose",
                 "log", "exp", "relu", "ones", "zeros", "ones_like", "zeros_like", "cpu", "all_devices"]
    classes = ["EWiseAdd", "AddScalar", "EWiseMul", "MulScalar", "EWisePow", "PowerScalar", "EWiseDiv",
               "DivScalar", "MatMul", "Summation", "BroadcastTo", "Reshape", "Negate", "Transpose", "Log",
               "Exp", "ReLU"]
    missing = [n for n in functions + classes + ["Tensor", "init"] if not hasattr(ndl, n)]
    assert not missing
    assert all(issubclass(getattr(ndl, n), ndl.autograd.TensorOp) for n in classes)
    missing_init = [n for n in ["rand", "randn", "constant", "randb", "one_hot", "ones", "zeros"]
                    if not hasattr(ndl.init, n)]
    assert not missing_init
    assert ndl.autograd.LAZY_MODE is False


def test_init_constructors(ndl):
    ones = ndl.init.ones(2, 3, dtype="float32")
    assert ones.shape == (2, 3) and ones.dtype == np.float32 and not ones.requires_grad
    np.testing.assert_array_equal(ones.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(ndl.zeros_like(ones).numpy(), np.zeros((2, 3)))
    hot = ndl.init.one_hot(4, np.array([2, 0]))
    np.testing.assert_array_equal(hot.numpy(), [[0, 0, 1, 0], [1, 0, 0, 0]])
    full = ndl.init.constant(2, c=3.5, dtype="float64", requires_grad=True)
    assert full.requires_grad and full.dtype == np.float64
    np.testing.assert_array_equal(full.numpy(), [3.5, 3.5])


def test_lazy_mode_defers_compute_until_realized(ndl, monkeypatch):
    monkeypatch.setattr(ndl.autograd, "LAZY_MODE", True)
    x = leaf(ndl, 1.0, 2.0)
    y = ndl.exp(x) + x
    assert y.cached_data is None and y.inputs[0].cached_data is None
    np.testing.assert_allclose(y.numpy(), np.exp([1.0, 2.0]) + [1.0, 2.0])
    assert y.inputs[0].cached_data is not None
