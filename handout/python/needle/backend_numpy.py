# Generated from reference/python/needle/backend_numpy.py by `make handout`; do not edit.
"""The numpy backend: a single CPU device whose arrays are numpy arrays."""
import numpy


class Device:
    """Base class of the devices an array can live on."""


class CPUDevice(Device):
    """Arrays on the host, stored as plain numpy arrays."""

    def __repr__(self):
        return "cpu()"

    def __hash__(self):
        return self.__repr__().__hash__()

    def __eq__(self, other):
        return isinstance(other, CPUDevice)

    def enabled(self):
        return True

    def zeros(self, *shape, dtype="float32"):
        return numpy.zeros(shape, dtype=dtype)

    def ones(self, *shape, dtype="float32"):
        return numpy.ones(shape, dtype=dtype)

    def randn(self, *shape):
        # numpy.random.randn gives float64; callers cast as they need.
        return numpy.random.randn(*shape)

    def rand(self, *shape):
        return numpy.random.rand(*shape)

    def one_hot(self, n, i, dtype="float32"):
        return numpy.eye(n, dtype=dtype)[i]

    def empty(self, shape, dtype="float32"):
        return numpy.empty(shape, dtype=dtype)

    def full(self, shape, fill_value, dtype="float32"):
        # empty + fill: what numpy.full does, minus its Python wrapper
        # (backward() makes its ones this way every training step).
        array = numpy.empty(shape, dtype=dtype)
        array.fill(fill_value)
        return array


def cpu():
    """Return the CPU device."""
    return CPUDevice()


def default_device():
    return cpu()


def all_devices():
    """Return every device this backend supports."""
    return [cpu()]
