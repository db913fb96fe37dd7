# Generated from reference/python/needle/init/init_basic.py by `make handout`; do not edit.
"""Tensor constructors: random, constant and one-hot tensors on a device."""
import needle as ndl


def rand(*shape, low=0.0, high=1.0, device=None, dtype="float32", requires_grad=False):
    """Uniform samples in [low, high)."""
    device = ndl.cpu() if device is None else device
    array = device.rand(*shape) * (high - low) + low
    return ndl.Tensor(array, device=device, dtype=dtype, requires_grad=requires_grad)


def randn(*shape, mean=0.0, std=1.0, device=None, dtype="float32", requires_grad=False):
    """Gaussian samples with the given mean and standard deviation."""
    device = ndl.cpu() if device is None else device
    array = device.randn(*shape) * std + mean
    return ndl.Tensor(array, device=device, dtype=dtype, requires_grad=requires_grad)


def constant(*shape, c=1.0, device=None, dtype="float32", requires_grad=False):
    """A tensor filled with c."""
    device = ndl.cpu() if device is None else device
    # A fresh array of the right dtype, wrapped as is: backward() makes one
    # per training step, so skip the Tensor constructor's copy.
    array = device.full(shape, c, dtype=dtype)
    return ndl.Tensor.make_const(array, requires_grad=requires_grad)


def ones(*shape, device=None, dtype="float32", requires_grad=False):
    return constant(*shape, c=1.0, device=device, dtype=dtype, requires_grad=requires_grad)


def zeros(*shape, device=None, dtype="float32", requires_grad=False):
    return constant(*shape, c=0.0, device=device, dtype=dtype, requires_grad=requires_grad)


def randb(*shape, p=0.5, device=None, dtype="bool", requires_grad=False):
    """Booleans, each True with probability p."""
    device = ndl.cpu() if device is None else device
    array = device.rand(*shape) <= p
    return ndl.Tensor(array, device=device, dtype=dtype, requires_grad=requires_grad)


def one_hot(n, i, device=None, dtype="float32", requires_grad=False):
    """Rows of the n x n identity picked by the integer labels i."""
    device = ndl.cpu() if device is None else device
    return ndl.Tensor(device.one_hot(n, i.numpy() if isinstance(i, ndl.Tensor) else i, dtype=dtype),
                      device=device, requires_grad=requires_grad)


def zeros_like(array, *, device=None, requires_grad=False):
    device = device if device else array.device
    return zeros(*array.shape, dtype=array.dtype, device=device, requires_grad=requires_grad)


def ones_like(array, *, device=None, requires_grad=False):
    device = device if device else array.device
    return ones(*array.shape, dtype=array.dtype, device=device, requires_grad=requires_grad)
