"""Helpers shared by the case modules. They run inside the worker on the
library under test, so they use only numpy and what the case passes in."""
import functools
import gzip
import hashlib
import json
import math
import os
import struct
import weakref

import numpy as np

from .registry import CALL_KINDS, Call

# The scored inputs. Every input below comes from `rng(number)`, call by
# call. Without a grader (a student's own `make test`, `make submit`) that is
# the fixed public stream of the number. When the grader runs the cases, it
# draws every input itself, outside the sandbox, from a secret this process
# never sees, and leaves the arrays beside this package (HANDED_FILE): each
# call then returns the array the grader drew for it, so answers seen before
# grading (the handout's, a classmate's) are worth nothing, and nothing here
# can draw another input. A call the grader did not draw (one the reference
# never made: an out_grad shaped by a wrong forward) gets the public stream's
# value. Every call is recorded (`draw_requests`): the reference's run on the
# public inputs tells the grader which arrays to draw.
HANDED_FILE = "handed_inputs.npz"
HANDED_INDEX = "index"  # in HANDED_FILE: JSON, call key -> [dtype, offset, shape] in its dtype's values
DRAW_METHODS = ("randn", "uniform", "randint", "permutation", "choice")


def packed(arrays):
    """HANDED_FILE's members for `arrays` (call key -> array): the values of
    each dtype in one flat array, `values_<dtype>`, and HANDED_INDEX saying
    where each array is. A worker reads a few members, not one with its own
    header per input (the cases import took 62 ms at best with 108 of them
    read one by one, 39 ms packed)."""
    flats, sizes, index = {}, {}, {}
    for name in sorted(arrays):
        array = np.asarray(arrays[name])
        dtype = array.dtype.name
        index[name] = [dtype, sizes.get(dtype, 0), list(array.shape)]
        sizes[dtype] = index[name][1] + array.size
        flats.setdefault(dtype, []).append(array.ravel())
    members = {f"values_{dtype}": np.concatenate(parts) for dtype, parts in flats.items()}
    members[HANDED_INDEX] = np.frombuffer(json.dumps(index).encode(), np.uint8)
    return members


class _Handed:
    """The grader's arrays by call key, from HANDED_FILE (packed): a dtype's
    values are read when a call first asks for one of them."""

    def __init__(self, path):
        self._file = np.load(path, allow_pickle=False)
        self._index = json.loads(self._file[HANDED_INDEX].tobytes())
        self._values = {}  # dtype -> its values, once read

    def get(self, name):
        if name not in self._index:
            return None
        dtype, offset, shape = self._index[name]
        if dtype not in self._values:
            self._values[dtype] = self._file[f"values_{dtype}"]
        return self._values[dtype][offset : offset + math.prod(shape)].reshape(shape)


def _load_handed():
    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the worker's runner folder
    path = os.path.join(folder, HANDED_FILE)
    return _Handed(path) if os.path.isfile(path) else None


HANDED = _load_handed()
_REQUESTS = set()  # (number, calls): every call sequence made on rng(number)


def plain_arg(value):
    """A call argument as plain Python data, the same on both sides (ints, floats, tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(plain_arg(v) for v in value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None:
        return None
    raise TypeError(f"a draw's argument must be a number or a shape, not {type(value).__name__}")


def _sized(call):
    """A call with its shape reduced to a size: numpy's streams give randn(6, 4)
    and randn(2, 3, 4) the same 24 numbers, and so do the handed arrays (a
    gradient shaped wrongly still gets the out_grad values the reference got)."""
    method, args, kwargs = call
    if method == "randn":
        return method, (int(np.prod(args)),) if args else (), kwargs
    return method, args, tuple((k, int(np.prod(v)) if k == "size" and v is not None else v) for k, v in kwargs)


def call_key(number, calls):
    """The name of the array handed for the last of `calls` on rng(number)."""
    return "i" + hashlib.sha256(repr((int(number), tuple(_sized(c) for c in calls))).encode()).hexdigest()[:24]


def draw_requests():
    """[(number, calls), ...]: what the cases drew in this process, longest sequences only."""
    longest = [r for r in _REQUESTS if not any(o[0] == r[0] and len(o[1]) > len(r[1]) and o[1][:len(r[1])] == r[1]
                                                 for o in _REQUESTS)]
    return sorted(longest, key=repr)


class Stream:
    """rng(number): numpy's RandomState methods, each call answered with
    the grader's array for it when there is one (see HANDED_FILE)."""

    def __init__(self, number):
        self.number, self.calls = int(number), ()
        self.state = None  # the public stream's state once another stream has used the generator (_Public)

    def _draw(self, method, args, kwargs):
        call = (method, plain_arg(args), tuple(sorted((k, plain_arg(v)) for k, v in kwargs.items())))
        self.calls += (call,)
        _REQUESTS.add((self.number, self.calls))
        value = PUBLIC.draw(self, method, args, kwargs)  # the public stream moves on either way
        handed = None if HANDED is None else HANDED.get(call_key(self.number, self.calls))
        if handed is None or handed.size != np.size(value):
            return value
        return handed.reshape(np.shape(value)).copy() if isinstance(value, np.ndarray) else type(value)(handed)

    def __getattr__(self, method):
        if method not in DRAW_METHODS:
            raise AttributeError(method)
        return lambda *args, **kwargs: self._draw(method, args, kwargs)


class _Public:
    """The public streams, all drawn from one RandomState: building one
    takes 0.2 ms (a worker's cases make a hundred), seeding one 3 us. It
    holds one stream's state at a time; the state of the stream it held is
    saved when another stream takes it, if that stream is still in use."""

    def __init__(self):
        self.generator, self.holder = None, None  # holder: a weak reference to the stream held

    def draw(self, stream, method, args, kwargs):
        """What RandomState(stream.number) gives for this call after the stream's earlier ones."""
        if self.generator is None:
            self.generator = np.random.RandomState()
        held = self.holder and self.holder()
        if held is not stream:
            if held is not None:
                held.state = self.generator.get_state()
            if stream.state is None:
                self.generator.seed(stream.number)
            else:
                self.generator.set_state(stream.state)
            self.holder = weakref.ref(stream)
        return getattr(self.generator, method)(*args, **kwargs)


PUBLIC = _Public()


# Central differences in float64: the error is about h^2 * |f'''| (truncation)
# plus eps * |f| / h (round-off). With h = 1e-5 and inputs of order 1 both stay
# below 1e-9, so 1e-6 separates right from wrong gradients with a wide margin
# (a wrong gradient is off by O(1), a 0.1% slip by 1e-3).
NUMERIC_STEP = 1e-5
NUMERIC_TOLERANCE = 1e-6

# How close a float64 gradient must be to the reference's, relative to the
# largest entry: correct formulations differ by a few roundings (1e-15 at
# most on these inputs), while central differences of the forward are off
# by 3e-12 to 3e-10 at h = 1e-5 and by about 1e-11 at the best step for a
# curved op. So a worker that reports differences of the student's forward
# as the gradient (case code patched from inside it) fails. Float32 values
# keep the case's usual tolerance: their rounding hides the difference.
# (The round-off of a difference grows with the sum of |f * out_grad| over
# the output, so it is large for every input but a 0-d one near 0: those
# are drawn away from 0.)
EXACT = 1e-13


def _plain(value):
    """A keyword value a grader's spec can carry as JSON: a Python number,
    None, or a tuple of ints."""
    if value is None or type(value) in (int, float):
        return True
    return type(value) is tuple and all(type(v) is int for v in value)


def call_of(kind, op, arrays, kwargs):
    """The Call of a case computing `kind` of ndl.<op>(*arrays, **kwargs)
    (registry.Call), or None when a keyword is not plain data: a numpy
    scalar is part of what such a case tests, and JSON would make it a
    Python number."""
    if kind not in CALL_KINDS or not all(_plain(v) for v in kwargs.values()):
        return None
    inputs = tuple((tuple(int(d) for d in np.shape(a)), np.asarray(a).dtype.name, bool(np.all(np.asarray(a) > 0)))
                   for a in arrays)
    return Call(kind, op, inputs, tuple(sorted(kwargs.items())))


def rng(seed):
    """The draws of a case's input number `seed` (Stream)."""
    return Stream(seed)


def randn(seed, *shape, dtype=np.float64):
    return np.asarray(rng(seed).randn(*shape), dtype=dtype)


def positive(seed, *shape, dtype=np.float64):
    """Inputs in [0.5, 2): safe for log, division and fractional powers."""
    return np.asarray(rng(seed).uniform(0.5, 2.0, size=shape), dtype=dtype)


def numeric_gradients(forward, arrays, out_grad):
    """d/dx_i of sum(forward(*arrays) * out_grad) by central differences.

    grader/grading/run/gradcheck.py has the full checker; this package runs inside the
    sandbox on its own (it imports nothing from grader), hence this copy of
    the loop.
    """
    grads = []
    for i, base in enumerate(arrays):
        grad = np.zeros_like(base, dtype=np.float64)
        for idx in np.ndindex(*base.shape):
            shifted = [a.copy() for a in arrays]
            shifted[i][idx] = base[idx] + NUMERIC_STEP
            plus = np.sum(forward(*shifted) * out_grad)
            shifted[i][idx] = base[idx] - NUMERIC_STEP
            minus = np.sum(forward(*shifted) * out_grad)
            grad[idx] = (plus - minus) / (2 * NUMERIC_STEP)
        grads.append(grad)
    return grads


def tensor_check(ndl, value, what):
    """Refuse anything but a needle Tensor, naming what returned it.

    Any class named Tensor with a numpy() method counts: a submission that
    imports `python.needle` besides `needle` (it works from the homework
    root, as the course runs it) makes Tensors of a second copy of the class.
    """
    if isinstance(value, ndl.Tensor):
        return value
    if type(value).__name__ == "Tensor" and callable(getattr(value, "numpy", None)):
        return value
    raise TypeError(f"{what} returned {type(value).__name__}, expected a needle Tensor")


def reverse_walk(ndl, output, out_grad):
    """Adjoints of every node `output` depends on, by our own reverse pass.

    Uses only the library's op.gradient, never its topological sort or its
    compute_gradient_of_variables, so Q2 cases do not depend on Q3/Q4 code.
    Returns a dict id(node) -> adjoint Tensor.
    """
    order, seen = [], set()
    stack = [(output, False)]
    while stack:  # iterative post-order DFS
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((x, False) for x in reversed(node.inputs))
    adjoints = {id(output): out_grad}
    for node in reversed(order):
        grad = adjoints.get(id(node))
        if grad is None or node.op is None:
            continue
        for inp, partial in zip(node.inputs, node.op.gradient_as_tuple(grad, node)):
            if partial is None:
                continue
            tensor_check(ndl, partial, f"{type(node.op).__name__}.gradient")
            prev = adjoints.get(id(inp))
            adjoints[id(inp)] = partial if prev is None else prev + partial  # an operator: helper names may differ
    return adjoints


@functools.lru_cache(maxsize=2)
def read_mnist(images_path, labels_path):
    """Our own MNIST reader, so Q6 cases do not depend on the Q5 parse_mnist."""
    raw = gunzipped(images_path)
    n, rows, cols = struct.unpack(">III", raw[4:16])
    X = np.frombuffer(raw, np.uint8, offset=16).reshape(n, rows * cols).astype(np.float32)
    X /= np.float32(255)
    y = np.frombuffer(gunzipped(labels_path), np.uint8, offset=8).copy()
    return X, y


def gunzipped(path):
    """The bytes the gzip file at `path` holds. The grader's copy of the data
    folder also keeps them decompressed, as `.gunzipped/<name without .gz>`
    beside it: read from there when it is, rather than inflate them again in
    every worker (MNIST's training images: 0.14 s)."""
    folder, name = os.path.split(path)
    unpacked = os.path.join(folder, ".gunzipped", name[: -len(".gz")])
    if name.endswith(".gz") and os.path.isfile(unpacked):
        with open(unpacked, "rb") as f:
            return f.read()
    with gzip.open(path, "rb") as f:
        return f.read()


TRAIN = ("data/train-images-idx3-ubyte.gz", "data/train-labels-idx1-ubyte.gz")
TEST = ("data/t10k-images-idx3-ubyte.gz", "data/t10k-labels-idx1-ubyte.gz")


def read_test_set(data_folder):
    """MNIST's test set from the folder holding it: what a "test_error" case
    evaluates the returned weights on (the grader calls it with its data folder)."""
    return read_mnist(*(os.path.join(data_folder, os.path.basename(p)) for p in TEST))
